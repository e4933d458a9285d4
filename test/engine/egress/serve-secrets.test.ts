/**
 * `warden serve`'s secret store end to end (a real server process, the Docker engine and the
 * egress testbed's HTTPS host, which records the headers it receives): a secret PUT through the
 * API reaches its bound host from a session that names it; a PUT rotates it and a DELETE revokes it
 * for the session's next request; a restarted server's adopted session still uses the store; and
 * the value, its base64 and its URL encoding are in no API answer, tool result, log line, audit
 * line or file of the server's state.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { hashKey } from "../../../src/server/tenancy/auth.js";
import { describeEngine } from "../../helpers/engine.js";
import {
  bundleCli,
  removeTenant,
  type ServeChild,
  spawnServe,
  testQuotas,
} from "../../helpers/server-fixture.js";
import { type EgressTestbed, startEgressTestbed } from "./testbed.js";

const tenant = `test-serve-secrets-${process.pid}`;
const KEY = "serve-secrets-key";
const FIRST = "ghp_ServeFirst0123456789abcdef";
const ROTATED = "ghp_ServeRotated9876543210zyxw";
const NEEDLES = [FIRST, ROTATED].flatMap((v) => [
  v,
  Buffer.from(v).toString("base64"),
  encodeURIComponent(`Bearer ${v}`),
]);

/** `python3 fetch.py URL`: a GET with `Authorization: Bearer $GITHUB_TOKEN`, printing `OK <status>` or `ERR <status>`. */
const FETCH = `
import os, sys, urllib.request, urllib.error
req = urllib.request.Request(sys.argv[1], headers={"Authorization": "Bearer " + os.environ["GITHUB_TOKEN"]})
try:
    with urllib.request.urlopen(req, timeout=8) as r: print("OK", r.status)
except urllib.error.HTTPError as e: print("ERR", e.code)
except Exception as e: print("ERR", type(e).__name__)
`;

describeEngine("warden serve: secrets from the store, through the gateway", () => {
  let bed: EgressTestbed;
  let dir: string;
  let main: string;
  let config: string;
  let serve: ServeChild;
  const logs: string[] = [];
  const answers: string[] = [];
  let sessionId = "";

  const call = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(`${serve.url}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", ...init.headers },
    });
    const text = await res.text();
    answers.push(text);
    return { status: res.status, text, json: () => JSON.parse(text) };
  };
  const putSecret = (value: string) =>
    call("/v1/secrets/GITHUB_TOKEN", {
      method: "PUT",
      body: JSON.stringify({ value, bindings: [{ hosts: ["allowed.test"] }] }),
    });
  const bash = async (command: string) => {
    const res = await call(`/v1/sessions/${sessionId}/tool-calls`, {
      method: "POST",
      body: JSON.stringify({ toolCalls: [{ id: "c", name: "bash", arguments: { command } }] }),
    });
    return (res.json() as { results: { content: { text: string }[] }[] }).results[0]?.content[0]?.text.trim();
  };
  /** The Authorization headers the public host received for /hello, in order. */
  const received = async () =>
    (await bed.hostLog("public", "headers"))
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as [string, Array<[string, string]>])
      .filter(([path]) => path === "/hello")
      .map(([, h]) => h.find(([k]) => k.toLowerCase() === "authorization")?.[1]);
  const stop = async () => {
    serve.child.kill("SIGTERM");
    await serve.exited;
    logs.push(serve.stderr());
  };

  beforeAll(async () => {
    bed = await startEgressTestbed();
    dir = await mkdtemp(join(tmpdir(), "warden-serve-secrets-"));
    await writeFile(join(dir, "secrets.key"), randomBytes(32).toString("base64"), { mode: 0o600 });
    config = join(dir, "serve.json");
    await writeFile(
      config,
      JSON.stringify({
        port: 0,
        stateDir: "state",
        warmPool: { size: 0 },
        secrets: { keyFile: "secrets.key" },
        tenants: [
          {
            id: tenant,
            keys: [{ id: "k", sha256: hashKey(KEY) }],
            quotas: testQuotas(2),
            network: {
              allow: ["allowed.test:443", "other.test:443"],
              egressNetworks: [bed.publicNetwork],
              caBundle: bed.caBundlePath,
            },
          },
        ],
      }),
    );
    main = await bundleCli();
    serve = await spawnServe(main, config);
  }, 120_000);

  afterAll(async () => {
    if (serve?.child.exitCode === null) serve.child.kill("SIGKILL");
    await removeTenant(tenant);
    await bed?.dispose();
    if (dir) await rm(dir, { recursive: true, force: true });
    if (main) await rm(dirname(main), { recursive: true, force: true });
  });

  it("sends the stored value to the bound host only; the sandbox sees the placeholder", async () => {
    expect((await putSecret(FIRST)).status).toBe(201);
    const created = await call("/v1/sessions", {
      method: "POST",
      body: JSON.stringify({
        network: { allow: ["allowed.test:443", "other.test:443"] },
        secrets: [{ name: "GITHUB_TOKEN" }],
      }),
    });
    expect(created.status).toBe(201);
    sessionId = created.json().id;
    const put = await call(`/v1/sessions/${sessionId}/files?path=fetch.py`, {
      method: "PUT",
      headers: { "content-type": "application/octet-stream" },
      body: FETCH,
    });
    expect(put.status).toBe(200);
    expect(await bash('echo "$GITHUB_TOKEN"')).toBe("{{GITHUB_TOKEN}}");
    expect(await bash("python3 fetch.py https://allowed.test/hello")).toBe("OK 200");
    expect(await received()).toEqual([`Bearer ${FIRST}`]);
    expect(await bash("python3 fetch.py https://other.test/hello")).toBe("ERR 403");
    expect(await received()).toEqual([`Bearer ${FIRST}`]);
    // The audit trail: one `secret` line per request with the placeholder, names only, each
    // linked to the tool call that made it.
    const secretLines = async () =>
      (await readFile(join(dir, "state", "audit.jsonl"), "utf8"))
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((r) => r.kind === "secret");
    await expect.poll(async () => (await secretLines()).length).toBe(2);
    expect(await secretLines()).toEqual([
      expect.objectContaining({
        tenant,
        session: sessionId,
        decision: "use",
        secrets: ["GITHUB_TOKEN"],
        host: "allowed.test",
        port: 443,
        path: "/hello",
        toolCallId: "c",
        batch: expect.any(String),
      }),
      expect.objectContaining({ decision: "refuse", reason: "unbound", host: "other.test", toolCallId: "c" }),
    ]);
  }, 120_000);

  it("applies a PUT (rotation) and a DELETE (revocation) to the session's next request", async () => {
    expect((await putSecret(ROTATED)).json().version).toBe(2);
    expect(await bash("python3 fetch.py https://allowed.test/hello")).toBe("OK 200");
    expect((await received()).at(-1)).toBe(`Bearer ${ROTATED}`);
    expect((await call("/v1/secrets/GITHUB_TOKEN", { method: "DELETE" })).status).toBe(204);
    expect(await bash("python3 fetch.py https://allowed.test/hello")).toBe("ERR 403");
    expect((await received()).length).toBe(2);
  }, 60_000);

  it("gives an adopted session its secrets again from the store after a restart", async () => {
    expect((await putSecret(FIRST)).status).toBe(201);
    await stop();
    serve = await spawnServe(main, config, ["--on-exit", "close"]);
    expect(await bash("python3 fetch.py https://allowed.test/hello")).toBe("OK 200");
    expect((await received()).at(-1)).toBe(`Bearer ${FIRST}`);
  }, 120_000);

  it("leaves the value in no answer, log line, audit line or state file", async () => {
    await stop();
    const state = join(dir, "state");
    const files = (await readdir(state, { recursive: true, withFileTypes: true })).filter((d) => d.isFile());
    const texts = await Promise.all(files.map((d) => readFile(join(d.parentPath, d.name), "utf8")));
    expect(files.map((d) => d.name)).toEqual(expect.arrayContaining(["audit.jsonl", "secrets.json"]));
    const everything = [...answers, ...logs, ...texts].join("\n");
    for (const n of NEEDLES) expect(everything).not.toContain(n);
    // The search looks for the right bytes: the host did receive them.
    expect(await received()).toContain(`Bearer ${ROTATED}`);
  }, 60_000);

  it("refuses to start (exit 2) with a key that does not open the store, naming the key file", async () => {
    const keyFile = join(dir, "secrets.key");
    await writeFile(keyFile, randomBytes(32).toString("hex"));
    const err = await spawnServe(main, config).catch((e: Error) => e);
    expect((err as Error).message).toContain(
      `warden serve exited (2):\nwarden: INVALID_ARGUMENT: secrets.keyFile '${keyFile}' does not open the secret store '${join(dir, "state", "secrets.json")}': none of its 1 entries decrypts with it.`,
    );
  }, 60_000);
});
