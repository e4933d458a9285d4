import { describe, expect, it, vi } from "vitest";
import {
  type PoolBackend,
  poolKey,
  RETRY_SPARE_WITHIN_MS,
  tenantPools,
  WarmPool,
} from "../../../../src/sandbox/index.js";
import { DEFAULT_LIMITS } from "../../../../src/sandbox/limits.js";
import { FakeSandbox } from "../../../helpers/fake-sandbox.js";

type Req = { image: string; policy?: string; ws?: string };
type Prep = { id: number; image: string; dead?: boolean };

function fakeBackend(opts: { failPrepares?: number } = {}) {
  let next = 1;
  let failures = opts.failPrepares ?? 0;
  const live = new Set<number>();
  const handed: { id: number; ws?: string }[] = [];
  const backend: PoolBackend<Req, Prep> = {
    keyOf: async (r) => `${r.image}|${r.policy ?? ""}`,
    prepare: async (r) => {
      await new Promise((res) => setTimeout(res, 5));
      if (failures-- > 0) throw new Error("engine busy");
      const p = { id: next++, image: r.image };
      live.add(p.id);
      return p;
    },
    handOver: async (p, r) => {
      handed.push({ id: p.id, ws: r.ws });
      return new FakeSandbox({ info: { containerId: `c${p.id}` } });
    },
    createCold: async () => {
      const id = next++;
      live.add(id);
      return new FakeSandbox({ info: { containerId: `cold${id}` } });
    },
    alive: (p) => !p.dead,
    discard: async (p) => {
      live.delete(p.id);
    },
  };
  return { backend, live, handed };
}

describe("WarmPool", () => {
  it("claims a pre-started entry of the same key and refills it in the background", async () => {
    const { backend, live, handed } = fakeBackend();
    const pool = new WarmPool({ backend, size: 2 });
    await pool.warm({ image: "a" });
    await pool.settled();
    expect(pool.stats()).toEqual([{ key: "a|", idle: 2, filling: 0, size: 2 }]);
    const r = await pool.claim({ image: "a", ws: "/host/ws" });
    expect(r.pooled).toBe(true);
    expect(r.sandbox.info.containerId).toBe("c2");
    expect(handed).toEqual([{ id: 2, ws: "/host/ws" }]);
    await pool.settled();
    expect(pool.stats()[0]).toMatchObject({ idle: 2 });
    await pool.drain();
    expect([...live]).toEqual([2]); // only the handed-over one remains (it is the caller's)
  });

  it("never hands a container of another key (policy hash differs): cold create instead", async () => {
    const { backend } = fakeBackend();
    const pool = new WarmPool({ backend, size: 1 });
    await pool.warm({ image: "a", policy: "p1" });
    await pool.settled();
    const r = await pool.claim({ image: "a", policy: "p2" });
    expect(r.pooled).toBe(false);
    expect(r.sandbox.info.containerId).toMatch(/^cold/);
    await pool.drain();
  });

  it("discards dead entries instead of handing them over", async () => {
    const { backend } = fakeBackend();
    const pool = new WarmPool({ backend, size: 2 });
    await pool.warm({ image: "a" });
    await pool.settled();
    const [first] = (pool as unknown as { keys: Map<string, { idle: { prepared: Prep }[] }> }).keys.get(
      "a|",
    )!.idle;
    const second = (pool as unknown as { keys: Map<string, { idle: { prepared: Prep }[] }> }).keys.get("a|")!
      .idle[1]!;
    second.prepared.dead = true;
    const r = await pool.claim({ image: "a" });
    expect(r.sandbox.info.containerId).toBe(`c${first!.prepared.id}`);
    await pool.drain();
  });

  it("retries failed refills and drains everything, including refills in flight", async () => {
    const logs: string[] = [];
    const { backend, live } = fakeBackend({ failPrepares: 2 });
    const pool = new WarmPool({ backend, size: 2, retryMs: 5, log: (m) => logs.push(m) });
    await pool.warm({ image: "a" });
    await pool.settled();
    expect(pool.stats()[0]).toMatchObject({ idle: 2, filling: 0 });
    // Both fills started together and failed alike: one failure counted, the same wait for both.
    expect(logs).toEqual([
      "pool: refill failed, retrying in 0.005 s: engine busy",
      "pool: refill failed, retrying in 0.005 s: engine busy",
    ]);
    void pool.claim({ image: "a" });
    await pool.drain();
    expect(live.size).toBe(1); // the claimed one
    const after = await pool.claim({ image: "a" });
    expect(after.pooled).toBe(false);
    expect(pool.stats()[0]).toMatchObject({ idle: 0, filling: 0 });
  });

  it("doubles the wait of a key whose refills keep failing, up to backoff.maxMs, until one succeeds", async () => {
    const logs: string[] = [];
    const { backend } = fakeBackend({ failPrepares: 5 });
    const backoff = { firstMs: 2000, maxMs: 30 };
    const pool = new WarmPool({ backend, size: 1, retryMs: 5, backoff, log: (m) => logs.push(m) });
    await pool.warm({ image: "a" });
    await pool.settled();
    expect(logs.map((m) => m.replace(/: engine busy$/, ""))).toEqual(
      ["0.005", "0.01", "0.02", "0.03", "0.03"].map((s) => `pool: refill failed, retrying in ${s} s`),
    );
    expect(pool.stats()[0]).toMatchObject({ idle: 1 });
    await pool.drain();
  });

  it("waits for one slow failing hand-over at most, then creates cold (not one wait per spare)", async () => {
    const { backend, handed } = fakeBackend();
    let attempts = 0;
    backend.handOver = async (p) => {
      attempts++;
      await new Promise((res) => setTimeout(res, RETRY_SPARE_WITHIN_MS + 50));
      throw new Error(`spare ${p.id} did not answer a ping`);
    };
    const pool = new WarmPool({ backend, size: 3 });
    await pool.warm({ image: "a" });
    await pool.settled();
    const r = await pool.claim({ image: "a" });
    expect({ attempts, pooled: r.pooled, handed: handed.length }).toEqual({
      attempts: 1,
      pooled: false,
      handed: 0,
    });
    await pool.drain();
  });

  it("tries the next spare after a hand-over that failed fast", async () => {
    // performance.now() stands still: "fast" is then 0 ms however long a loaded host stalls the
    // event loop between the hand-over's start and its failure (a real stall past
    // RETRY_SPARE_WITHIN_MS would make it a slow one).
    vi.useFakeTimers({ toFake: ["performance"] });
    try {
      const { backend } = fakeBackend();
      const handOver = backend.handOver;
      let attempts = 0;
      backend.handOver = async (p, r) => {
        if (attempts++ === 0) throw new Error("Pod gone");
        return handOver(p, r);
      };
      const pool = new WarmPool({ backend, size: 2 });
      await pool.warm({ image: "a" });
      await pool.settled();
      const r = await pool.claim({ image: "a" });
      expect({ attempts, pooled: r.pooled }).toEqual({ attempts: 2, pooled: true });
      await pool.drain();
    } finally {
      vi.useRealTimers();
    }
  });

  it("keeps at most maxKeys keys: a new key evicts the least recently used one and its spares", async () => {
    const logs: string[] = [];
    const { backend, live } = fakeBackend();
    const pool = new WarmPool({ backend, size: 1, maxKeys: 2, log: (m) => logs.push(m) });
    await pool.warm({ image: "a" });
    await pool.warm({ image: "b" });
    await pool.settled();
    await pool.claim({ image: "a" }); // "a" is now the most recently used; its spare is refilled
    await pool.settled();
    await pool.warm({ image: "c" }); // evicts "b"
    await pool.warm({ image: "d" }); // evicts "a"
    await pool.warm({ image: "e" }); // evicts "c" while its refill is in flight: that spare is discarded
    await pool.settled();
    expect(pool.stats().map((k) => [k.key, k.idle, k.filling])).toEqual([
      ["d|", 1, 0],
      ["e|", 1, 0],
    ]);
    expect(logs.map((l) => l.replace(/key (\w)\|.*evicted/, "key $1 evicted"))).toEqual([
      "pool: key b evicted (more than maxKeys in use)",
      "pool: key a evicted (more than maxKeys in use)",
      "pool: key c evicted (more than maxKeys in use)",
    ]);
    expect(live.size).toBe(3); // the claimed sandbox and the spares of d and e
    await pool.drain();
    expect(live.size).toBe(1);
  });
});

describe("WarmPool idle age", () => {
  it("replaces spares older than maxIdleMs without waiting for a claim", async () => {
    vi.useFakeTimers({ toFake: ["setInterval", "Date"] });
    try {
      const { backend, live } = fakeBackend();
      const pool = new WarmPool({ backend, size: 1, maxIdleMs: 60_000 });
      await pool.warm({ image: "a" });
      await pool.settled();
      const [first] = [...live];
      vi.advanceTimersByTime(75_000); // the reaper runs every 15 s; the spare is now 75 s old
      await pool.settled();
      expect(live.has(first!)).toBe(false);
      expect(live.size).toBe(1);
      expect(pool.stats()[0]).toMatchObject({ idle: 1, filling: 0 });
      await pool.drain();
      expect(live.size).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("tenantPools", () => {
  it("bounds keys per tenant: one tenant churning keys never evicts another's spares", async () => {
    const { backend, live } = fakeBackend();
    const pools = tenantPools({ backend, size: 1, maxKeys: 1 });
    await pools.of("acme")!.warm({ image: "a" });
    await pools.of("acme")!.settled();
    const acmeSpare = [...live][0]!;
    for (const image of ["x", "y", "z"]) {
      await pools.of("globex")!.warm({ image });
      await pools.of("globex")!.settled();
    }
    expect(live.has(acmeSpare)).toBe(true);
    expect(pools.idle()).toBe(2); // acme's spare and globex's newest key's
    await pools.drain();
    expect(live.size).toBe(0);
    expect(pools.of("acme")).toBeUndefined();
  });

  it("puts each tenant's spares on the backend its function gives that tenant (asked once per tenant)", async () => {
    const acme = fakeBackend();
    const globex = fakeBackend();
    const asked: string[] = [];
    const pools = tenantPools({
      backend: (tenant) => {
        asked.push(tenant);
        return (tenant === "globex" ? globex : acme).backend;
      },
      size: 1,
    });
    for (const tenant of ["acme", "globex", "globex"]) {
      await pools.of(tenant)!.warm({ image: "a" });
      await pools.of(tenant)!.settled();
    }
    expect(asked).toEqual(["acme", "globex"]);
    expect([acme.live.size, globex.live.size]).toEqual([1, 1]);
    await pools.drain();
    expect([acme.live.size, globex.live.size]).toEqual([0, 0]);
  });
});

describe("poolKey", () => {
  const base = {
    tenant: "acme",
    image: "warden-sandbox:latest",
    limits: { ...DEFAULT_LIMITS },
    runtime: "runc" as const,
    workspaceMode: "copy" as const,
    mounts: [],
    policyHash: "",
  };
  it("is equal for equal parts and ignores the host path in copy mode", () => {
    expect(poolKey(base)).toBe(poolKey({ ...base, workspaceHostPath: "/a" }));
    expect(poolKey(base)).toMatch(/^sha256:[0-9a-f]{64}$/);
  });
  it("differs for any hardening-relevant part or policy", () => {
    const k = poolKey(base);
    expect(poolKey({ ...base, limits: { ...base.limits, pids: 128 } })).not.toBe(k);
    expect(poolKey({ ...base, runtime: "runsc" })).not.toBe(k);
    expect(poolKey({ ...base, policyHash: "x" })).not.toBe(k);
    expect(poolKey({ ...base, tenant: "globex" })).not.toBe(k);
    expect(poolKey({ ...base, workspaceMode: "ro", workspaceHostPath: "/a" })).not.toBe(
      poolKey({ ...base, workspaceMode: "ro", workspaceHostPath: "/b" }),
    );
    expect(poolKey({ ...base, mounts: [{ hostPath: "/h", containerPath: "/m" }] })).not.toBe(k);
  });
  it("holds the network policy: a spare only goes to a session whose network policy matches", () => {
    const allow = (host: string) => ({
      mode: "allowlist" as const,
      rules: [{ host, ports: [443], decision: "allow" as const }],
    });
    const k = poolKey(base);
    expect(poolKey({ ...base, network: { mode: "none" } })).toBe(k);
    expect(poolKey({ ...base, network: allow("pypi.org") })).not.toBe(k);
    expect(poolKey({ ...base, network: allow("pypi.org") })).not.toBe(
      poolKey({ ...base, network: allow("npmjs.org") }),
    );
    expect(poolKey({ ...base, network: allow("pypi.org") })).toBe(
      poolKey({ ...base, network: { ...allow("pypi.org"), onConnection: () => {} } }),
    );
  });
});
