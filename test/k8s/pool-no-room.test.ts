/**
 * The Kubernetes warm pool when no node takes a spare (a full node; here a RuntimeClass no node
 * matches, test/helpers/k8s-no-node.ts, so the shared node is not filled): each spare Pod is
 * deleted as soon as the scheduler reports it Unschedulable, not after backend.startTimeoutMs, and
 * the key's refills back off (2 s, 4 s, 8 s, 16 s, … one spare at a time), so no spare waits for
 * room that session creates need, and the API calls stay few. Through `warden serve`: a session
 * create still waits backend.startTimeoutMs for room, then answers 503 NO_ROOM with the key's
 * back-off wait as Retry-After, and /metrics counts the key backing off.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { type PoolRequest, WarmPool } from "../../src/sandbox/index.js";
import type { PreparedPod } from "../../src/sandbox/kubernetes/index.js";
import { kubernetesPoolBackend } from "../../src/sandbox/kubernetes/index.js";
import { describeK8s, podLeftovers, removePods, TEST_SERVE_BACKEND, testCluster } from "../helpers/k8s.js";
import {
  createNoNodeRuntimeClass,
  NO_NODE_SCHEDULER_MESSAGE,
  type NoNodeRuntimeClass,
} from "../helpers/k8s-no-node.js";
import { serveTenants } from "../helpers/serve-tenants.js";

const TENANT = `test-k8s-pool-noroom-${process.pid}`;
/** Longer than the window: before the fix a spare stayed Pending this long. */
const START_TIMEOUT_MS = 20_000;
const WINDOW_MS = 28_000;

/** One spare Pod as the pool's API calls saw it, Date.now() ms: created, read Unschedulable, deleted. */
interface Seen {
  addedAt: number;
  unschedulableAt?: number;
  deletedAt?: number;
}

describeK8s("Kubernetes warm pool when no node takes a spare", () => {
  let nowhere: NoNodeRuntimeClass | undefined;
  let pool: WarmPool<PoolRequest, PreparedPod> | undefined;

  beforeAll(async () => {
    nowhere = await createNoNodeRuntimeClass("pool-on-no-node");
  });

  afterAll(async () => {
    await pool?.drain();
    await removePods(TENANT);
    const left = await podLeftovers(TENANT);
    await nowhere?.remove();
    expect(left).toEqual([]);
  });

  it("withdraws each unschedulable spare at once and backs off: 2 spares, then 1 after 2 s, 4 s and 8 s in 28 s", async () => {
    // The pool's own API calls, recorded (a spare lives ~0.1 s once withdrawn: too short to poll;
    // a watch here may answer "Too large resource version" while the apiserver's cache lags).
    const seen = new Map<string, Seen>();
    const cluster = testCluster(nowhere?.name, { startTimeoutMs: START_TIMEOUT_MS });
    const core = cluster.core;
    cluster.core = new Proxy(core, {
      get(target, prop, receiver) {
        const real = Reflect.get(target, prop, receiver);
        if (prop === "createNamespacedPod")
          return async (req: Parameters<typeof core.createNamespacedPod>[0]) => {
            const pod = await core.createNamespacedPod(req);
            seen.set(pod.metadata?.name ?? "", { addedAt: Date.now() });
            return pod;
          };
        if (prop === "readNamespacedPod")
          return async (req: Parameters<typeof core.readNamespacedPod>[0]) => {
            const pod = await core.readNamespacedPod(req);
            const when = pod.status?.conditions?.find((c) => c.type === "PodScheduled");
            const entry = seen.get(req.name);
            if (entry && when?.status === "False" && when.reason === "Unschedulable")
              entry.unschedulableAt ??= Date.now();
            return pod;
          };
        if (prop === "deleteNamespacedPod")
          return async (req: Parameters<typeof core.deleteNamespacedPod>[0]) => {
            const r = await core.deleteNamespacedPod(req);
            const entry = seen.get(req.name);
            if (entry) entry.deletedAt ??= Date.now();
            return r;
          };
        return typeof real === "function" ? real.bind(target) : real;
      },
    });
    const logs: string[] = [];
    pool = new WarmPool({ backend: kubernetesPoolBackend({ cluster }), size: 2, log: (m) => logs.push(m) });
    await pool.warm({ template: { tenant: TENANT } });

    for (let i = 0; i < 300 && seen.size === 0; i++) await new Promise((r) => setTimeout(r, 100));
    const t0 = Math.min(...[...seen.values()].map((s) => s.addedAt));
    await new Promise((r) => setTimeout(r, t0 + WINDOW_MS + 1500 - Date.now()));
    const backoff = pool.stats()[0]?.backoffMs;
    await pool.drain();

    const pods = [...seen.values()]
      .filter((s) => s.addedAt - t0 <= WINDOW_MS)
      .sort((a, b) => a.addedAt - b.addedAt);
    // 2 first spares at t0 (failing together), then one after each wait: ~2 s, ~6 s, ~14 s; the next at ~30 s.
    expect(pods.length).toBe(5);
    for (const pod of pods) {
      expect(pod.unschedulableAt).toBeDefined();
      expect(pod.deletedAt).toBeDefined();
      expect((pod.deletedAt ?? 0) - (pod.unschedulableAt ?? 0)).toBeLessThan(2000);
    }
    // Each try waits its back-off after the last spare was withdrawn (less the deletion's latency).
    const gaps = [2, 3, 4].map((i) => (pods[i]?.addedAt ?? 0) - (pods[i - 1]?.deletedAt ?? 0));
    [2000, 4000, 8000].forEach((wait, i) => {
      expect(gaps[i]).toBeGreaterThanOrEqual(wait - 500);
      expect(gaps[i]).toBeLessThan(wait + 1500);
    });
    const waits = logs.filter((l) => l.startsWith("pool: no room for a spare"));
    expect(waits.length).toBeGreaterThanOrEqual(4);
    waits.forEach((line, i) => {
      expect(line).toContain(`(the scheduler: "${NO_NODE_SCHEDULER_MESSAGE}`);
      expect(line).toMatch(new RegExp(`spare withdrawn, next try in ${[2, 4, 8, 16, 32][i]} s$`));
    });
    expect(backoff).toBe(16_000);
    expect(await podLeftovers(TENANT)).toEqual([]);
  }, 90_000);

  it("warden serve: a session create still waits startTimeoutMs while its pool key backs off, then answers 503 with the back-off as Retry-After, shown in /metrics", async () => {
    const prefix = `test-k8s-poolnr-${process.pid}`;
    const served = await serveTenants(prefix, {
      warmPool: { size: 1 },
      backend: { ...TEST_SERVE_BACKEND, runtimeClassName: nowhere?.name, startTimeoutMs: 6000 },
    });
    try {
      const t0 = Date.now();
      const r = await fetch(`${served.url}/v1/sessions`, {
        method: "POST",
        headers: { authorization: `Bearer ${served.keys.main}`, "content-type": "application/json" },
        body: "{}",
      });
      // 503 NO_ROOM, Retry-After the key's back-off wait at that moment: a step of its schedule
      // (its spares find no room every 2 s, 4 s, … on their own clock), not the default 10.
      const retryAfter = r.headers.get("retry-after");
      const body = (await r.json()) as { code: string; message: string };
      expect([r.status, body.code]).toEqual([503, "NO_ROOM"]);
      expect(["2", "4", "8"]).toContain(retryAfter);
      expect(body.message).toContain("was not scheduled within 6000 ms");
      expect(body.message).toMatch(new RegExp(`Retry in ${retryAfter} s \\(Retry-After\\)\\.$`));
      expect(Date.now() - t0).toBeGreaterThanOrEqual(6000);
      const metrics = await (await fetch(`${served.url}/metrics`)).text();
      expect(metrics).toMatch(/^warden_pool_backoff_keys 1$/m);
      expect(metrics).toMatch(/^warden_pool_idle_sandboxes 0$/m);
    } finally {
      await served.stop();
    }
    expect(await podLeftovers(`${prefix}-main`)).toEqual([]);
  }, 90_000);
});
