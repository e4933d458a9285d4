/**
 * `warden serve` on Kubernetes when the cluster takes no more session Pods, as a client sees it:
 * - no node takes the Pod: POST /v1/sessions answers 503 NO_ROOM with Retry-After 10 (no warm pool:
 *   no back-off to take it from) within backend.startTimeoutMs (plus the Pod's deletion), naming the
 *   scheduler's reason and what frees room, and no Pod is left;
 * - the namespace's ResourceQuota is used up: the same status and header at once, naming the quota,
 *   not RBAC.
 * A Pod no node takes is made without filling the shared node: a RuntimeClass no node matches
 * (test/helpers/k8s-no-node.ts), as a full node keeps one Pending with "Insufficient cpu"
 * (`npm run bench k8s`, docs/benchmarks.md).
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  describeK8s,
  podLeftovers,
  TEST_NAMESPACE,
  TEST_SERVE_BACKEND,
  testCluster,
} from "../helpers/k8s.js";
import { createNoNodeRuntimeClass, type NoNodeRuntimeClass } from "../helpers/k8s-no-node.js";
import { type ServedTenants, serveTenants } from "../helpers/serve-tenants.js";

const PREFIX = `test-k8s-noroom-${randomBytes(3).toString("hex")}`;
const TENANT = `${PREFIX}-main`;
const QUOTA = "test-no-room";
const START_TIMEOUT_MS = 6000;

describeK8s("warden serve on Kubernetes when no Pod fits", () => {
  let served: ServedTenants | undefined;
  let nowhere: NoNodeRuntimeClass | undefined;
  const newSession = async () => {
    const t0 = Date.now();
    const r = await fetch(`${served?.url}/v1/sessions`, {
      method: "POST",
      headers: { authorization: `Bearer ${served?.keys.main}`, "content-type": "application/json" },
      body: "{}",
    });
    return {
      status: r.status,
      retryAfter: r.headers.get("retry-after"),
      body: (await r.json()) as { code?: string; message?: string },
      ms: Date.now() - t0,
    };
  };

  beforeAll(async () => {
    nowhere = await createNoNodeRuntimeClass();
    served = await serveTenants(PREFIX, {
      backend: { ...TEST_SERVE_BACKEND, runtimeClassName: nowhere.name, startTimeoutMs: START_TIMEOUT_MS },
    });
  }, 120_000);

  afterAll(async () => {
    const { core } = testCluster();
    await core
      .deleteNamespacedResourceQuota({ name: QUOTA, namespace: TEST_NAMESPACE })
      .catch(() => undefined);
    const left = await podLeftovers(TENANT);
    await served?.stop();
    await nowhere?.remove();
    expect(left).toEqual([]);
  });

  it("answers a session no node takes with 503 and Retry-After within startTimeoutMs, with the scheduler's reason, and leaves no Pod", async () => {
    const r = await newSession();
    expect([r.status, r.retryAfter, r.body.code]).toEqual([503, "10", "NO_ROOM"]);
    expect(r.body.message).toMatch(
      new RegExp(
        `^Pod ${TEST_NAMESPACE}/warden-[0-9a-f-]+ was not scheduled within ${START_TIMEOUT_MS} ms: no node takes it \\(the scheduler: "0/1 nodes are available: 1 node\\(s\\) didn't match Pod's node affinity/selector\\.`,
      ),
    );
    expect(r.body.message).toContain(
      "Free room on a node (end sessions or warm pool spares: each sandbox Pod requests 10m CPU and 32 MiB of memory, and a node runs at most its maxPods Pods) or add nodes; backend.startTimeoutMs is how long a create waits for room. Retry in 10 s (Retry-After).",
    );
    expect(r.ms).toBeGreaterThanOrEqual(START_TIMEOUT_MS);
    expect(r.ms).toBeLessThan(START_TIMEOUT_MS + 10_000);
    expect(await podLeftovers(TENANT)).toEqual([]);
  }, 60_000);

  it("answers 503 with Retry-After at once, naming the quota, when the namespace's ResourceQuota has no Pod left", async () => {
    const { core } = testCluster();
    await core.createNamespacedResourceQuota({
      namespace: TEST_NAMESPACE,
      body: { metadata: { name: QUOTA }, spec: { hard: { pods: "0" } } },
    });
    // The quota controller fills in status.hard; until then admission refuses with "status unknown".
    for (let i = 0; i < 60; i++) {
      const q = await core.readNamespacedResourceQuota({ name: QUOTA, namespace: TEST_NAMESPACE });
      if (q.status?.hard?.pods !== undefined) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    try {
      const r = await newSession();
      expect([r.status, r.retryAfter, r.body.code]).toEqual([503, "10", "NO_ROOM"]);
      expect(r.body.message).toMatch(
        new RegExp(
          `^creating Pod ${TEST_NAMESPACE}/warden-[0-9a-f-]+: the namespace's ResourceQuota is used up \\(pods "warden-[0-9a-f-]+" is forbidden: exceeded quota: ${QUOTA}, requested: pods=1, used: pods=\\d+, limited: pods=0\\); end sessions or warm pool spares there, or raise the quota \\(kubectl describe resourcequota\\)\\. Retry in 10 s \\(Retry-After\\)\\.$`,
        ),
      );
      expect(r.ms).toBeLessThan(5000);
      expect(await podLeftovers(TENANT)).toEqual([]);
    } finally {
      await core.deleteNamespacedResourceQuota({ name: QUOTA, namespace: TEST_NAMESPACE });
    }
  }, 60_000);
});
