import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadServerConfig, resolveServerConfig } from "../../../../src/server/config/index.js";
import { defaultLimits } from "../../../../src/server/sessions/request.js";
import { hashKey, KeyRing } from "../../../../src/server/tenancy/auth.js";

const quotas = {
  maxSessions: 1,
  maxConcurrentToolCalls: 2,
  cpus: 1,
  memoryBytes: 67108864,
  workspaceBytes: 1000,
};
const key = (id: string, token: string) => ({ id, sha256: hashKey(token) });

describe("warden serve: config and keys", () => {
  it("hashKey is the lower-case hex SHA-256 of the token", () => {
    expect(hashKey("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });

  it("fills defaults and resolves relative paths against the file's directory", () => {
    const cfg = resolveServerConfig(
      { stateDir: "st", tenants: [{ id: "acme", keys: [key("k", "t")], quotas, policy: ["p.yaml"] }] },
      "/etc/warden",
    );
    expect(cfg).toMatchObject({
      host: "127.0.0.1",
      port: 8080,
      stateDir: "/etc/warden/st",
      auditLog: "/etc/warden/st/audit.jsonl",
      jsonBodyLimitBytes: 1048576,
      tarBodyLimitBytes: 268435456,
      tarMaxEntries: 100000,
      filesMaxBytes: 8388608,
      maxBufferedBytes: 268435456,
      httpRequestTimeoutMs: 120000,
      shutdownGraceMs: 10000,
      approvalTimeoutMs: 300000,
      warmPool: { size: 1, maxIdleMs: 600000, maxKeys: 8, networked: 0 },
    });
    expect(cfg.tenants[0]).toEqual({
      id: "acme",
      keys: [key("k", "t")],
      quotas: {
        ...quotas,
        maxConcurrentWorkspaceReads: 2,
        tmpBytes: 67108864,
        pids: 256,
        spillSessionBytes: 268435456,
        spillBytes: 1073741824,
        maxBufferedBytes: 67108864,
        maxNetworkedSessions: 5,
      },
      idleTtlMs: 1800000,
      maxLifetimeMs: 28800000,
      policy: ["/etc/warden/p.yaml"],
      workspaceRoots: [],
      workspaceModes: ["copy", "ro"],
      images: ["warden-sandbox:latest"],
    });
  });

  it("maxConcurrentToolCalls defaults to 64, which the default pids limit 256 runs (64 × 3 + 40 = 232)", () => {
    const { maxConcurrentToolCalls: _, ...rest } = quotas;
    const cfg = resolveServerConfig({ tenants: [{ id: "acme", keys: [key("k", "t")], quotas: rest }] }, "/");
    expect(cfg.tenants[0]?.quotas).toMatchObject({ maxConcurrentToolCalls: 64, pids: 256 });
  });

  it("issue 11 item 9: a pids quota too small for maxConcurrentToolCalls is refused naming both", () => {
    const tenant = (q: object) => ({
      tenants: [{ id: "acme", keys: [key("k", "t")], quotas: { ...quotas, ...q } }],
    });
    expect(() => resolveServerConfig(tenant({ maxConcurrentToolCalls: 100 }), "/", "c.yaml")).toThrow(
      "c.yaml: /tenants/0/quotas: pids 256 is too small for maxConcurrentToolCalls 100: running 100 calls at once takes 340 pids " +
        "(3 processes per call plus 40 for warden-helper); raise pids to 340 or lower maxConcurrentToolCalls to 72.",
    );
    expect(() => resolveServerConfig(tenant({ maxConcurrentToolCalls: 1, pids: 42 }), "/", "c.yaml")).toThrow(
      "c.yaml: /tenants/0/quotas: pids 42 is too small for maxConcurrentToolCalls 1: running 1 call at once takes 43 pids " +
        "(3 processes per call plus 40 for warden-helper); raise pids to 43.",
    );
    expect(
      resolveServerConfig(tenant({ maxConcurrentToolCalls: 100, pids: 340 }), "/").tenants[0]?.quotas.pids,
    ).toBe(340);
  });

  it("a session asking for no pids gets at least what maxConcurrentToolCalls needs (100 calls: 340, not 256)", () => {
    const cfg = resolveServerConfig(
      {
        tenants: [
          {
            id: "acme",
            keys: [key("k", "t")],
            quotas: { ...quotas, maxConcurrentToolCalls: 100, pids: 400 },
          },
        ],
      },
      "/",
    );
    expect(defaultLimits(cfg.tenants[0]!).pids).toBe(340);
  });

  it("warmPool: size 0 turns the pool off; a size above 16 is refused naming the field", () => {
    const tenants = [{ id: "acme", keys: [key("k", "t")], quotas }];
    expect(resolveServerConfig({ warmPool: { size: 0 }, tenants }, "/").warmPool).toEqual({
      size: 0,
      maxIdleMs: 600000,
      maxKeys: 8,
      networked: 0,
    });
    expect(() => resolveServerConfig({ warmPool: { size: 17 }, tenants }, "/", "c.yaml")).toThrow(
      "c.yaml: invalid server configuration: /warmPool/size must be <= 16.",
    );
  });

  it("contendedOutputBytesPerSecond defaults to 16 MiB/s, 0 turns it off, a negative rate is refused", () => {
    const tenants = [{ id: "acme", keys: [key("k", "t")], quotas }];
    expect(resolveServerConfig({ tenants }, "/").contendedOutputBytesPerSecond).toBe(16_777_216);
    expect(
      resolveServerConfig({ contendedOutputBytesPerSecond: 0, tenants }, "/").contendedOutputBytesPerSecond,
    ).toBe(0);
    expect(() => resolveServerConfig({ contendedOutputBytesPerSecond: -1, tenants }, "/", "c.yaml")).toThrow(
      "c.yaml: invalid server configuration: /contendedOutputBytesPerSecond must be >= 0.",
    );
  });

  it("a misspelt key is named, beside the key it should have been", () => {
    const { maxSessions, ...rest } = quotas;
    const typo = [{ id: "acme", keys: [key("k", "t")], quotas: { ...rest, maxSesions: maxSessions } }];
    expect(() => resolveServerConfig({ tenants: typo }, "/", "c.yaml")).toThrow(
      "c.yaml: invalid server configuration: /tenants/0/quotas is missing required field(s) maxSessions; /tenants/0/quotas has unknown field 'maxSesions'.",
    );
  });

  it("an invalid file is an INVALID_ARGUMENT naming the field", () => {
    expect(() =>
      resolveServerConfig(
        { tenants: [{ id: "acme", keys: [{ id: "k", sha256: "plain-text" }], quotas }] },
        "/",
        "c.yaml",
      ),
    ).toThrow("c.yaml: invalid server configuration: /tenants/0/keys/0/sha256 must match pattern");
    expect(() => resolveServerConfig({ tenants: [] }, "/", "c.yaml")).toThrow(
      "c.yaml: invalid server configuration: /tenants must not have fewer than 1 items.",
    );
    expect(() =>
      resolveServerConfig(
        {
          tenants: [
            { id: "a", keys: [key("k", "t")], quotas },
            { id: "a", keys: [key("k2", "u")], quotas },
          ],
        },
        "/",
        "c.yaml",
      ),
    ).toThrow("c.yaml: tenant id 'a' appears twice.");
    expect(() =>
      resolveServerConfig(
        {
          tenants: [
            { id: "a", keys: [key("k", "t")], quotas },
            { id: "b", keys: [key("k2", "t")], quotas },
          ],
        },
        "/",
        "c.yaml",
      ),
    ).toThrow("c.yaml: key 'k2' of tenant 'b' reuses another key's hash.");
  });

  it("loads YAML and JSON files; the example config is valid", async () => {
    const dir = await mkdtemp(join(tmpdir(), "warden-cfg-"));
    try {
      await writeFile(
        join(dir, "a.yaml"),
        `port: 9000\ntenants:\n  - id: t1\n    keys: [{id: k, sha256: ${hashKey("x")}}]\n    quotas: {maxSessions: 1, maxConcurrentToolCalls: 1, cpus: 1, memoryBytes: 67108864, workspaceBytes: 1}\n`,
      );
      expect((await loadServerConfig(join(dir, "a.yaml"))).port).toBe(9000);
      await writeFile(join(dir, "b.json"), "{not json");
      await expect(loadServerConfig(join(dir, "b.json"))).rejects.toThrow(
        `Server config '${join(dir, "b.json")}' does not parse`,
      );
      const example = await loadServerConfig("examples/server/warden-serve.yaml");
      expect(example.tenants.map((t) => t.id)).toEqual(["acme", "globex"]);
      const compose = await loadServerConfig("examples/server/compose/warden-serve.yaml");
      expect(compose.tenants[0]!.policy).toEqual(["/etc/warden-policies/default.yaml"]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("KeyRing maps a bearer token to its tenant and refuses anything else with 401", () => {
    const cfg = resolveServerConfig(
      {
        tenants: [
          { id: "a", keys: [key("ka", "token-a")], quotas },
          { id: "b", keys: [key("kb", "token-b")], quotas },
        ],
      },
      "/",
    );
    const ring = new KeyRing(cfg.tenants);
    expect(ring.authenticate("Bearer token-b").tenant.id).toBe("b");
    expect(ring.authenticate("bearer token-a").keyId).toBe("ka");
    for (const bad of [
      undefined,
      "",
      "Bearer",
      "Basic dG9rZW4tYQ==",
      "Bearer token-c",
      "Bearer token-a extra",
    ]) {
      expect(() => ring.authenticate(bad)).toThrow(
        "Missing or unknown API key. Send 'Authorization: Bearer <key>' with a configured key.",
      );
    }
  });
});
