/**
 * The claim both backends share (pool/pooled-claims.ts): a poolable spec (no or copy-mode
 * workspace; network none, or an allowlist when the pool is `networked` and the backend pools it)
 * goes through the tenant's warm pool, anything else and every claim without a pool starts cold
 * through the backend's own create; each claim is counted once.
 */
import { describe, expect, it } from "vitest";
import { type PoolRequest, pooledClaims } from "../../../../src/sandbox/pool/index.js";
import type { PoolBackend } from "../../../../src/sandbox/pool/warm-pool.js";
import type { Sandbox } from "../../../../src/sandbox/types.js";

/** A stand-in sandbox: only its name is looked at. */
const sandboxNamed = (name: string) => ({ info: { containerId: name } }) as unknown as Sandbox;

/** Pool entries that record the requests they saw; spares are numbered. */
function recordingPool(
  tenants: string[],
  requests: PoolRequest[],
): (tenant: string) => PoolBackend<PoolRequest, string> {
  let n = 0;
  return (tenant) => {
    tenants.push(tenant);
    return {
      keyOf: async (request) => JSON.stringify(request.template) + (request.policyHash ?? ""),
      prepare: async () => `spare-${++n}`,
      handOver: async (prepared, request) => {
        requests.push(request);
        return sandboxNamed(prepared);
      },
      createCold: async (request) => {
        requests.push(request);
        return sandboxNamed("pool-cold");
      },
      alive: () => true,
      discard: async () => {},
    };
  };
}

describe("pooledClaims", () => {
  it("without a pool every claim is the backend's cold create, counted cold", async () => {
    const starts: string[] = [];
    const cold: unknown[] = [];
    const signal = new AbortController().signal;
    const claims = pooledClaims(
      { onSandboxStart: (source) => starts.push(source) },
      () => {
        throw new Error("no pool backend without a pool");
      },
      async (spec, identity, call) => {
        cold.push([spec, identity, call]);
        return sandboxNamed("cold");
      },
    );
    const result = await claims.claim({ image: "img" }, { sessionId: "s", tenant: "t" }, { signal });
    expect([result.sandbox.info.containerId, result.pooled, starts, cold]).toEqual([
      "cold",
      false,
      ["cold"],
      [[{ image: "img" }, { sessionId: "s", tenant: "t" }, { signal }]],
    ]);
    expect(claims.poolStats()).toEqual({ idle: 0, backingOff: 0 });
  });

  it("a poolable spec takes the tenant's spare, with the key's template and the claim's own fields apart", async () => {
    const starts: string[] = [];
    const tenants: string[] = [];
    const requests: PoolRequest[] = [];
    const claims = pooledClaims(
      { warmPool: { size: 1, maxIdleMs: 60_000, ttlMs: 3_600_000 }, onSandboxStart: (s) => starts.push(s) },
      recordingPool(tenants, requests),
      async () => sandboxNamed("backend-cold"),
    );
    const spec = { image: "img", workspace: { hostPath: "/w" } };
    const identity = { sessionId: "s-1", tenant: "acme", controllerId: "serve@x" };
    // The key's first claim starts cold (through the pool) and fills the key.
    const first = await claims.claim(spec, identity, { policyHash: "p1" });
    await expect.poll(() => claims.poolStats().idle).toBe(1);
    const second = await claims.claim(spec, { ...identity, sessionId: "s-2" }, { policyHash: "p1" });
    expect([
      first.sandbox.info.containerId,
      first.pooled,
      second.sandbox.info.containerId,
      second.pooled,
    ]).toEqual(["pool-cold", false, "spare-1", true]);
    expect(starts).toEqual(["cold", "pool"]);
    expect(tenants).toEqual(["acme"]);
    expect(requests[1]).toEqual({
      template: { image: "img", tenant: "acme", controllerId: "serve@x" },
      claim: { sessionId: "s-2", workspace: { hostPath: "/w" } },
      policyHash: "p1",
    });
    await claims.close();
    expect(claims.poolStats().idle).toBe(0);
  });

  it("a ro workspace or an egress allowlist starts cold through the backend, even with a pool", async () => {
    const starts: string[] = [];
    const tenants: string[] = [];
    const claims = pooledClaims(
      { warmPool: { size: 1, maxIdleMs: 60_000, ttlMs: 3_600_000 }, onSandboxStart: (s) => starts.push(s) },
      recordingPool(tenants, []),
      async () => sandboxNamed("backend-cold"),
    );
    const ro = await claims.claim({ workspace: { hostPath: "/w", mode: "ro" } }, {});
    const networked = await claims.claim({ network: { mode: "allowlist", rules: [] } }, {});
    expect([ro.sandbox.info.containerId, networked.sandbox.info.containerId, starts, tenants]).toEqual([
      "backend-cold",
      "backend-cold",
      ["cold", "cold"],
      [],
    ]);
    await claims.close();
  });

  it("a networked pool takes an allowlist spec through the pool, unless the backend leaves it out", async () => {
    const network = { mode: "allowlist" as const, rules: [] };
    const warmPool = { size: 1, maxIdleMs: 60_000, ttlMs: 3_600_000, networked: 1 };
    const tenants: string[] = [];
    const claims = pooledClaims({ warmPool }, recordingPool(tenants, []), async () =>
      sandboxNamed("backend-cold"),
    );
    const pooled = await claims.claim({ network }, { tenant: "acme" });
    // A backend whose spares cannot have network (Kubernetes) creates such a spec cold.
    const offlineOnly = pooledClaims(
      { warmPool },
      recordingPool(tenants, []),
      async () => sandboxNamed("backend-cold"),
      (spec) => (spec.network?.mode ?? "none") === "none",
    );
    const cold = await offlineOnly.claim({ network }, { tenant: "acme" });
    expect([pooled.sandbox.info.containerId, cold.sandbox.info.containerId, tenants]).toEqual([
      "pool-cold",
      "backend-cold",
      ["acme"],
    ]);
    await claims.close();
    await offlineOnly.close();
  });

  it("holds at most `networked` spares with network over every tenant; a claim beyond them starts cold", async () => {
    const network = { mode: "allowlist" as const, rules: [] };
    const warmPool = { size: 1, maxIdleMs: 60_000, ttlMs: 3_600_000, networked: 1 };
    const claims = pooledClaims({ warmPool }, recordingPool([], []), async () =>
      sandboxNamed("backend-cold"),
    );
    // Two tenants' first claims each fill their key; only one spare with network is made.
    await claims.claim({ network }, { tenant: "a" });
    await claims.claim({ network }, { tenant: "b" });
    await expect.poll(() => claims.poolStats()).toEqual({ idle: 1, backingOff: 1 });
    const [a, b] = [
      await claims.claim({ network }, { tenant: "a" }),
      await claims.claim({ network }, { tenant: "b" }),
    ];
    expect([a.pooled, b.pooled]).toEqual([true, false]);
    // Claimed, the spare no longer counts: a spare without network is never bounded by it.
    await claims.claim({}, { tenant: "a" });
    await expect.poll(() => claims.poolStats().idle).toBe(2);
    await claims.close();
  });
});
