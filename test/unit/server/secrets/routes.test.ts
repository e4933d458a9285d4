/**
 * The /v1/secrets routes and POST /v1/sessions `secrets` through the real fastify app (inject),
 * over the fake backend: a tenant sees and changes only its own secrets, no response, audit line or
 * state file holds a value (nor its base64 or URL encoding), and a session's secrets read the
 * store at each use (rotation and deletion apply without restarting it).
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { NetworkOptions } from "../../../../src/egress/index.js";
import type { ServerConfig } from "../../../../src/server/config/index.js";
import { type RunningServer, startServer } from "../../../../src/server/server.js";
import { auth, FakeBackend, serverParts, tenant, testConfig } from "../../../helpers/server-fakes.js";

const VALUE = "ghp_RouteTestValue+/=0123456789 xyz";
const ROTATED = "ghp_RotatedRouteValue987654321";
const NEEDLES = [VALUE, ROTATED].flatMap((v) => [
  v,
  Buffer.from(v).toString("base64"),
  encodeURIComponent(v),
]);
const network = { rules: [{ host: "api.github.com", ports: [443], decision: "allow" as const }] };

/** Every file under `dir`, as text. */
async function allFiles(dir: string): Promise<string> {
  const names = await readdir(dir, { recursive: true, withFileTypes: true });
  const texts = await Promise.all(
    names.filter((d) => d.isFile()).map((d) => readFile(join(d.parentPath, d.name), "utf8")),
  );
  return texts.join("\n");
}

describe("warden serve: /v1/secrets", () => {
  let dir: string;
  let config: ServerConfig;
  let server: RunningServer;
  let backend: FakeBackend;
  const bodies: string[] = [];

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "warden-secret-routes-"));
    await writeFile(join(dir, "key"), randomBytes(32).toString("hex"));
    backend = new FakeBackend();
    config = {
      ...testConfig(join(dir, "state"), [tenant("alpha", { network }), tenant("beta")]),
      secrets: { keyFile: join(dir, "key"), storeFile: join(dir, "state", "secrets.json"), maxPerTenant: 10 },
    };
    server = await startServer({ config, ...serverParts(backend), listen: false });
    bodies.length = 0;
  });

  afterEach(async () => {
    await server.shutdown(0);
    // No response, audit line or state file ever holds a value (or its base64 / URL encoding).
    const everything = `${bodies.join("\n")}\n${await allFiles(join(dir, "state"))}`;
    for (const n of NEEDLES) expect(everything).not.toContain(n);
    await rm(dir, { recursive: true, force: true });
  });

  const call = async (
    who: "alpha" | "beta",
    method: "GET" | "PUT" | "DELETE" | "POST",
    url: string,
    payload?: object,
  ) => {
    const res = await server.app.inject({ method, url, headers: auth(who), ...(payload ? { payload } : {}) });
    bodies.push(res.body);
    return res;
  };
  const put = (
    who: "alpha" | "beta",
    name: string,
    value: unknown,
    bindings: unknown = [{ hosts: ["api.github.com"] }],
  ) => call(who, "PUT", `/v1/secrets/${name}`, { value, bindings });

  it("creates (201), rotates (200), lists, shows and deletes (204) a secret, never showing its value", async () => {
    const created = await put("alpha", "GITHUB_TOKEN", VALUE);
    expect(created.statusCode).toBe(201);
    expect(created.json()).toEqual({
      name: "GITHUB_TOKEN",
      version: 1,
      bindings: [{ hosts: ["api.github.com"], ports: [443], headers: ["authorization"] }],
      updatedAt: expect.any(String),
    });
    const rotated = await put("alpha", "GITHUB_TOKEN", ROTATED, [
      // (*.githubusercontent.com would be refused: a public suffix, whose subdomains anyone can own)
      { hosts: ["API.github.com", "*.github.example.org"], methods: ["GET"], pathPrefixes: ["/repos/acme/"] },
    ]);
    expect(rotated.statusCode).toBe(200);
    expect(rotated.json()).toMatchObject({
      version: 2,
      bindings: [
        {
          hosts: ["api.github.com", "*.github.example.org"],
          ports: [443],
          headers: ["authorization"],
          methods: ["GET"],
          pathPrefixes: ["/repos/acme/"],
        },
      ],
    });
    const list = await call("alpha", "GET", "/v1/secrets");
    expect(list.json()).toEqual({ secrets: [rotated.json()] });
    expect((await call("alpha", "GET", "/v1/secrets/GITHUB_TOKEN")).json()).toEqual(rotated.json());
    expect(server.ctx.secrets?.value("alpha", "GITHUB_TOKEN")).toBe(ROTATED);
    expect((await call("alpha", "DELETE", "/v1/secrets/GITHUB_TOKEN")).statusCode).toBe(204);
    const again = await call("alpha", "DELETE", "/v1/secrets/GITHUB_TOKEN");
    expect(again.statusCode).toBe(404);
    expect(again.json()).toEqual({
      code: "NOT_FOUND",
      message: `Tenant 'alpha' has no secret "GITHUB_TOKEN"; GET /v1/secrets lists its secrets.`,
    });
    expect((await call("alpha", "GET", "/v1/secrets")).json()).toEqual({ secrets: [] });
  });

  it("keeps tenants apart: another tenant's secret is a 404, and its own of the same name is its own", async () => {
    await put("alpha", "TOKEN", VALUE);
    expect((await call("beta", "GET", "/v1/secrets")).json()).toEqual({ secrets: [] });
    expect((await call("beta", "GET", "/v1/secrets/TOKEN")).statusCode).toBe(404);
    expect((await call("beta", "DELETE", "/v1/secrets/TOKEN")).statusCode).toBe(404);
    expect((await put("beta", "TOKEN", ROTATED)).statusCode).toBe(201);
    expect(server.ctx.secrets?.value("alpha", "TOKEN")).toBe(VALUE);
    expect(server.ctx.secrets?.value("beta", "TOKEN")).toBe(ROTATED);
    expect((await call("alpha", "GET", "/v1/secrets/TOKEN")).json().version).toBe(1);
    expect((await call("beta", "DELETE", "/v1/secrets/TOKEN")).statusCode).toBe(204);
    expect(server.ctx.secrets?.value("alpha", "TOKEN")).toBe(VALUE);
  });

  it("refuses a bad value with a 400 that does not repeat it", async () => {
    const cases: [string, string][] = [
      [
        `${VALUE}\n`,
        "is refused: it holds a character outside visible ASCII and space (a header cannot carry it) (a line break: a trailing newline from a file?).",
      ],
      [`${VALUE}"`, 'is refused: it holds " or \\, which the gateway cannot pass on in a header.'],
      [
        `${VALUE}é`,
        "is refused: it holds a character outside visible ASCII and space (a header cannot carry it).",
      ],
      ["", "is refused: it is empty."],
      [VALUE.repeat(300), "is refused: it is longer than 8192 bytes."],
    ];
    for (const [value, start] of cases) {
      const res = await put("alpha", "TOKEN", value);
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe("INVALID_ARGUMENT");
      expect(res.json().message).toBe(
        `value ${start} A secret's value is 1 to 8192 characters of visible ASCII (0x21-0x7e) or space, without " or \\, because the gateway sends it in an HTTP header. The value is not repeated here.`,
      );
    }
    // Not JSON at all, or a value of another type: fastify's 400s do not quote the body either.
    const raw = await server.app.inject({
      method: "PUT",
      url: "/v1/secrets/TOKEN",
      headers: { ...auth("alpha"), "content-type": "application/json" },
      payload: `{"value": "${VALUE}", "bindings": [}`,
    });
    bodies.push(raw.body);
    expect(raw.statusCode).toBe(400);
    const typed = await put("alpha", "TOKEN", { nested: VALUE });
    expect(typed.statusCode).toBe(400);
    expect((await call("alpha", "GET", "/v1/secrets")).json()).toEqual({ secrets: [] });
  });

  it("refuses a bad name or binding with a 400 naming the field", async () => {
    const message = async (name: string, bindings: unknown) =>
      (await put("alpha", name, VALUE, bindings)).json().message;
    expect(await message("lower", [{ hosts: ["a.org"] }])).toBe(
      'name "lower" is not a secret name: upper-case letters, digits and _, starting with a letter, at most 64 characters (GITHUB_TOKEN).',
    );
    expect(await message("T", [{ hosts: ["api.github.com:443"] }])).toBe(
      'bindings[0].hosts[0] "api.github.com:443" has a port: a binding\'s hosts are names only (api.github.com, *.example.org); its ports go in ports.',
    );
    expect(await message("T", [{ hosts: ["*.com"] }])).toContain('bindings[0].hosts[0] "*.com": ');
    // A public suffix's subdomains belong to anyone: a secret bound to them could go to anyone.
    expect(await message("T", [{ hosts: ["*.githubusercontent.com"] }])).toContain(
      'bindings[0].hosts[0] "*.githubusercontent.com": ',
    );
    expect(await message("T", [{ hosts: ["a.org"], headers: ["host"] }])).toBe(
      'bindings[0]: header "host" frames or routes the request, or a proxy consumes it; a secret cannot go there.',
    );
    expect(await message("T", [{ hosts: ["a.org"], headers: ["keep-alive"] }])).toBe(
      'bindings[0]: header "keep-alive" frames or routes the request, or a proxy consumes it; a secret cannot go there.',
    );
    expect(await message("T", [{ hosts: ["a.org"], methods: ["get"] }])).toBe(
      'bindings[0]: method "get" must be an upper-case HTTP method (GET, POST, …).',
    );
    expect(await message("T", [{ hosts: ["a.org"], pathPrefixes: ["/a/../b"] }])).toBe(
      "bindings[0].pathPrefixes[0] must not hold . or .. segments (the request's path is compared as sent).",
    );
    expect(await message("T", [{ hosts: ["a.org"], pathPrefixes: ["repos"] }])).toBe(
      'bindings[0].pathPrefixes[0] must start with /, got "repos".',
    );
    expect(await message("T", [{ hosts: ["a.org"], ports: [] }])).toBe(
      "bindings[0].ports is empty: leave it out for its default.",
    );
    expect((await put("alpha", "T", VALUE, [{ hosts: ["a.org"], ports: [0] }])).statusCode).toBe(400);
    // Every list is bounded: 16 bindings, 32 hosts and path prefixes, 16 of the others.
    const many = <T>(n: number, f: (i: number) => T) => Array.from({ length: n }, (_, i) => f(i));
    expect(
      await message(
        "T",
        many(17, () => ({ hosts: ["a.org"] })),
      ),
    ).toBe("body/bindings must NOT have more than 16 items");
    expect(await message("T", [{ hosts: many(33, (i) => `h${i}.org`) }])).toBe(
      "body/bindings/0/hosts must NOT have more than 32 items",
    );
    expect(await message("T", [{ hosts: ["a.org"], headers: many(17, (i) => `x-h${i}`) }])).toBe(
      "body/bindings/0/headers must NOT have more than 16 items",
    );
    expect((await put("alpha", "T", VALUE, [])).statusCode).toBe(400);
    expect((await call("alpha", "GET", "/v1/secrets")).json()).toEqual({ secrets: [] });
  });

  it("gives a session the tenant's secrets, read from the store at each use", async () => {
    await put("alpha", "GITHUB_TOKEN", VALUE);
    const res = await call("alpha", "POST", "/v1/sessions", {
      network: { allow: ["api.github.com:443"] },
      secrets: [{ name: "GITHUB_TOKEN" }, { name: "GITHUB_TOKEN", env: "GH", file: "/run/gh" }].slice(0, 1),
    });
    expect(res.statusCode).toBe(201);
    const net = backend.created[0]?.sandbox?.network as Extract<NetworkOptions, { mode: "allowlist" }>;
    const [secret] = net.secrets ?? [];
    expect(secret?.name).toBe("GITHUB_TOKEN");
    expect(await secret?.value()).toBe(VALUE);
    await put("alpha", "GITHUB_TOKEN", ROTATED, [{ hosts: ["api.github.com"], headers: ["x-token"] }]);
    expect(await secret?.value()).toBe(ROTATED);
    expect(secret?.bindings).toEqual([{ hosts: ["api.github.com"], ports: [443], headers: ["x-token"] }]);
    await call("alpha", "DELETE", "/v1/secrets/GITHUB_TOKEN");
    expect(await secret?.value()).toBeUndefined();
    expect(secret?.bindings).toEqual([]);
    // The record keeps the names to give the secrets again on adoption, never a value.
    const record = JSON.parse(
      await readFile(join(dir, "state", "sessions", `${res.json().id}.json`), "utf8"),
    );
    expect(record.secrets).toEqual([{ name: "GITHUB_TOKEN" }]);
  });

  it("passes env and file through, and refuses a name the tenant does not have, a repeat, or no network", async () => {
    await put("alpha", "GITHUB_TOKEN", VALUE);
    await put("beta", "BETA_ONLY", VALUE);
    const create = (body: object) => call("alpha", "POST", "/v1/sessions", body);
    const allow = { allow: ["api.github.com:443"] };
    const ok = await create({
      network: allow,
      secrets: [{ name: "GITHUB_TOKEN", env: "GH", file: "/run/gh" }],
    });
    expect(ok.statusCode).toBe(201);
    const net = backend.created[0]?.sandbox?.network as Extract<NetworkOptions, { mode: "allowlist" }>;
    expect(net.secrets?.map((s) => [s.name, s.env, s.file])).toEqual([["GITHUB_TOKEN", "GH", "/run/gh"]]);
    const messages = [
      await create({ network: allow, secrets: [{ name: "BETA_ONLY" }] }),
      await create({
        network: allow,
        secrets: [{ name: "GITHUB_TOKEN" }, { name: "GITHUB_TOKEN", env: false }],
      }),
      await create({ secrets: [{ name: "GITHUB_TOKEN" }] }),
      await create({ network: allow, env: { GITHUB_TOKEN: "x" }, secrets: [{ name: "GITHUB_TOKEN" }] }),
    ].map((r) => [r.statusCode, r.json().message]);
    expect(messages).toEqual([
      [
        400,
        "secrets[0].name BETA_ONLY is not a secret of tenant 'alpha'; create it with PUT /v1/secrets/BETA_ONLY first (GET /v1/secrets lists them).",
      ],
      [400, "secrets[1].name GITHUB_TOKEN is listed twice."],
      [
        400,
        "secrets need network.allow: a secret is only used by the session's egress gateway, on requests to its bound hosts; list those hosts in network.allow.",
      ],
      [
        400,
        "secrets[0] puts its placeholder in GITHUB_TOKEN, which env also sets; drop it from env or give the secret another env.",
      ],
    ]);
    const tooMany = await create({
      network: allow,
      secrets: Array.from({ length: 33 }, (_, i) => ({ name: `S${i}` })),
    });
    expect([tooMany.statusCode, tooMany.json().message]).toEqual([
      400,
      "secrets must not have more than 32 items; the fields are image, workspaceMode, workspacePath, limits, tools, env, network and secrets (docs/server-api.md, API).",
    ]);
    expect(backend.created).toHaveLength(1);
  });

  it("writes no value to the audit log, and the request lines name the route, not the value", async () => {
    await put("alpha", "GITHUB_TOKEN", VALUE);
    await put("alpha", "GITHUB_TOKEN", `${VALUE}\n`);
    await call("alpha", "DELETE", "/v1/secrets/GITHUB_TOKEN");
    const lines = (await readFile(config.auditLog, "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.kind, l.tenant, l.method, l.route, l.status])).toEqual([
      ["request", "alpha", "PUT", "/v1/secrets/:name", 201],
      ["request", "alpha", "PUT", "/v1/secrets/:name", 400],
      ["request", "alpha", "DELETE", "/v1/secrets/:name", 204],
    ]);
  });
});

describe("warden serve: /v1/secrets without a store", () => {
  it("answers 400 naming secrets.keyFile on every route and for a session's secrets", async () => {
    const dir = await mkdtemp(join(tmpdir(), "warden-secret-routes-"));
    const server = await startServer({
      config: testConfig(join(dir, "state"), [tenant("alpha", { network })]),
      ...serverParts(),
      listen: false,
    });
    try {
      const expected = {
        code: "INVALID_ARGUMENT",
        message:
          "This warden serve has no secret store: its config has no 'secrets.keyFile'. The operator sets secrets.keyFile to a file of 32 random bytes (64 hex digits or base64: 'openssl rand -base64 32 > key' and chmod 600) and restarts the server.",
      };
      for (const [method, url, payload] of [
        ["GET", "/v1/secrets", undefined],
        ["GET", "/v1/secrets/T", undefined],
        ["PUT", "/v1/secrets/T", { value: VALUE, bindings: [{ hosts: ["a.org"] }] }],
        ["DELETE", "/v1/secrets/T", undefined],
        ["POST", "/v1/sessions", { network: { allow: ["api.github.com:443"] }, secrets: [{ name: "T" }] }],
      ] as const) {
        const res = await server.app.inject({
          method,
          url,
          headers: auth("alpha"),
          ...(payload ? { payload } : {}),
        });
        expect([method, url, res.statusCode, res.json()]).toEqual([method, url, 400, expected]);
      }
    } finally {
      await server.shutdown(0);
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("refuses to start with a key that does not open the store, before answering anything", async () => {
    const dir = await mkdtemp(join(tmpdir(), "warden-secret-routes-"));
    try {
      const keyFile = join(dir, "key");
      const secrets = { keyFile, storeFile: join(dir, "state", "secrets.json"), maxPerTenant: 10 };
      await writeFile(keyFile, randomBytes(32).toString("base64"));
      const config = { ...testConfig(join(dir, "state")), secrets };
      const first = await startServer({ config, ...serverParts(), listen: false });
      await first.app.inject({
        method: "PUT",
        url: "/v1/secrets/T",
        headers: auth("alpha"),
        payload: { value: VALUE, bindings: [{ hosts: ["a.org"] }] },
      });
      await first.shutdown(0);
      await writeFile(keyFile, randomBytes(32).toString("base64"));
      const err = await startServer({ config, ...serverParts(), listen: false }).catch((e: unknown) => e);
      expect((err as { code: string }).code).toBe("INVALID_ARGUMENT");
      expect((err as Error).message).toContain(`secrets.keyFile '${keyFile}' does not open the secret store`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
