/**
 * The Kubernetes warm pool on a real cluster: a claimed spare Pod carries the claiming session's
 * expiry (claim time + the session's ttlMs) in its `io.warden.expires` annotation, not the spare's
 * 25 h, so `warden gc` and reconcile judge the session by its own lifetime.
 */
import { afterAll, expect, it } from "vitest";
import { kubernetesPoolBackend, type PoolRequest, WarmPool } from "../../src/pool/index.js";
import { gcPods, type PreparedPod, type Sandbox } from "../../src/sandbox/index.js";
import { describeK8s, podLeftovers, removePods, TEST_NAMESPACE, testCluster } from "../helpers/k8s.js";

const TENANT = `test-k8s-pool-${process.pid}`;
const EXPIRES = "io.warden.expires";

describeK8s("Kubernetes warm pool: a claim", () => {
  const cluster = testCluster();
  const pool = new WarmPool<PoolRequest, PreparedPod>({
    backend: kubernetesPoolBackend({ cluster }),
    size: 1,
  });
  const sandboxes: Sandbox[] = [];

  afterAll(async () => {
    for (const s of sandboxes) await s.destroy();
    await pool.drain();
    await removePods(TENANT);
    expect(await podLeftovers(TENANT)).toEqual([]);
  });

  const expiresOf = async (name: string): Promise<string | undefined> =>
    (await cluster.core.readNamespacedPod({ name, namespace: TEST_NAMESPACE })).metadata?.annotations?.[
      EXPIRES
    ];

  it("sets the Pod's expiry annotation to the claiming session's: claim time + its ttlMs", async () => {
    const request = (claim?: PoolRequest["claim"]): PoolRequest => ({
      template: { tenant: TENANT, ttlMs: 10 * 60_000 },
      ...(claim ? { claim } : {}),
    });
    await pool.warm(request());
    await pool.settled();
    const list = await cluster.core.listNamespacedPod({
      namespace: TEST_NAMESPACE,
      labelSelector: `io.warden.tenant=${TENANT}`,
    });
    expect(list.items.length).toBe(1);
    const spare = list.items[0]?.metadata;
    const spareExpires = spare?.annotations?.[EXPIRES] ?? "";
    // A spare lives 25 h (SPARE_TTL_MS) from its creation.
    expect(Date.parse(spareExpires) - Date.parse(spare?.annotations?.["io.warden.created"] ?? "")).toBe(
      25 * 3_600_000,
    );

    const before = Date.now();
    const claim = await pool.claim(request({ sessionId: "claimer-1" }));
    const after = Date.now();
    sandboxes.push(claim.sandbox);
    expect(claim.pooled).toBe(true);
    expect(claim.sandbox.info.containerId).toBe(spare?.name);

    const annotated = await expiresOf(claim.sandbox.info.containerId);
    expect(annotated).toBe(claim.sandbox.info.expiresAt.toISOString());
    const expiresMs = Date.parse(annotated ?? "");
    expect(expiresMs).toBeGreaterThanOrEqual(before + 10 * 60_000);
    expect(expiresMs).toBeLessThanOrEqual(after + 10 * 60_000);
    expect(annotated).not.toBe(spareExpires);
    // gc judges the session by that expiry: kept a second before it, removed at it.
    const gcAt = async (ms: number) =>
      (await gcPods(cluster, { tenant: TENANT, now: new Date(ms), dryRun: true })).map((r) => [
        r.id,
        r.reason,
      ]);
    expect(await gcAt(expiresMs - 1000)).toEqual([]);
    expect(await gcAt(expiresMs)).toEqual([[spare?.name, "expired"]]);
  });
});
