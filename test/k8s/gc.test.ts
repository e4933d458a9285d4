/**
 * `warden gc --namespace` on a real cluster: an expired sandbox Pod is deleted (a dry run only
 * names it), a live one of the same tenant is left alone, and another tenant's is never looked at.
 */
import { afterAll, expect, it } from "vitest";
import {
  createKubernetesSandbox,
  gcPods,
  type KubernetesSandbox,
} from "../../src/sandbox/kubernetes/index.js";
import { describeK8s, podLeftovers, testCluster } from "../helpers/k8s.js";

const TENANT = `test-k8s-gc-${process.pid}`;

describeK8s("warden gc on Kubernetes", () => {
  const cluster = testCluster();
  const made: KubernetesSandbox[] = [];

  afterAll(async () => {
    for (const s of made) await s.destroy();
    expect(await podLeftovers(TENANT)).toEqual([]);
  });

  it("deletes an expired Pod, leaves a live one, and a dry run deletes nothing", async () => {
    const expiring = await createKubernetesSandbox({ tenant: TENANT, ttlMs: 1000 }, cluster);
    const live = await createKubernetesSandbox({ tenant: TENANT }, cluster);
    made.push(expiring, live);
    await new Promise((r) => setTimeout(r, 1500));
    const expected = [
      {
        kind: "pod",
        id: expiring.info.containerId,
        sessionId: expiring.info.sessionId,
        tenant: TENANT,
        reason: "expired",
      },
    ];
    expect(await gcPods(cluster, { tenant: TENANT, dryRun: true })).toEqual(expected);
    expect((await podLeftovers(TENANT)).length).toBe(2);
    expect(await gcPods(cluster, { tenant: TENANT })).toEqual(expected);
    expect(await podLeftovers(TENANT)).toEqual([`pod ${live.info.containerId}`]);
    expect(await gcPods(cluster, { tenant: "test-k8s-gc-other" })).toEqual([]);
  });
});
