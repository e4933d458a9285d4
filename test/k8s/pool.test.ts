/**
 * The Kubernetes warm pool on a real cluster: a claimed spare Pod carries the claiming session's
 * expiry (claim time + the session's ttlMs) in its `io.warden.expires` annotation, not the spare's
 * 25 h, so `warden gc` and reconcile judge the session by its own lifetime; a spare whose helper
 * does not answer the claim's ping (every process stopped) is deleted and the claim creates a cold Pod.
 */
import { afterAll, expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/index.js";
import { type PoolRequest, WarmPool } from "../../src/sandbox/index.js";
import {
  apiStatus,
  gcPods,
  kubernetesPoolBackend,
  type PreparedPod,
  podExec,
} from "../../src/sandbox/kubernetes/index.js";
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
    await removePods(`${TENANT}-stopped`);
    expect(await podLeftovers(TENANT)).toEqual([]);
    expect(await podLeftovers(`${TENANT}-stopped`)).toEqual([]);
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

  // Found by an attack: a stopped spare was claimed in 0.1 s and the session's first call failed
  // after ~10 s (up to ~90 s with the default heartbeat). Now the claim pings it first (SPARE_PING_TIMEOUT_MS in src/sandbox/spare-ping.ts, 10 s).
  it("a spare whose processes are all stopped (kill -STOP -1) is not handed over: deleted, and the claim creates a cold Pod that answers", async () => {
    const request = (claim?: PoolRequest["claim"]): PoolRequest => ({
      template: { tenant: `${TENANT}-stopped` },
      ...(claim ? { claim } : {}),
    });
    await pool.warm(request());
    await pool.settled();
    const [spare] = (
      await cluster.core.listNamespacedPod({
        namespace: TEST_NAMESPACE,
        labelSelector: `io.warden.tenant=${TENANT}-stopped`,
      })
    ).items.map((p) => p.metadata?.name ?? "");
    expect(spare).toBeTruthy();
    // As `kubectl exec <spare> -- sh -c 'kill -STOP -1'`: every process but PID 1 and the sh stops.
    expect((await podExec(cluster, spare ?? "", ["sh", "-c", "kill -STOP -1"])).exitCode).toBe(0);

    const claim = await pool.claim(request({ sessionId: "claimer-stopped" }));
    sandboxes.push(claim.sandbox);
    expect(claim.pooled).toBe(false);
    expect(claim.sandbox.info.containerId).not.toBe(spare);
    const started = Date.now();
    const out: Buffer[] = [];
    const r = await claim.sandbox.exec({ argv: ["echo", "prompt"] }, { onStdout: (c) => out.push(c) });
    expect([r.exitCode, Buffer.concat(out).toString()]).toEqual([0, "prompt\n"]);
    expect(Date.now() - started).toBeLessThan(5000);
    const read = await cluster.core.readNamespacedPod({ name: spare ?? "", namespace: TEST_NAMESPACE }).then(
      () => 200,
      (err: unknown) => apiStatus(err),
    );
    expect(read).toBe(404);
  });
});
