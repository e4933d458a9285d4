/**
 * The Kubernetes SandboxBackend as a server opens it (openSandboxBackend), on a real cluster: it
 * holds its replica Lease while open (another holder of the same replica id is refused) and
 * releases it at close; a claim starts cold, refills the tenant's pool, and the next claim takes the
 * spare; list reports this replica's Pods with their namespace; adopt refuses another tenant's or
 * session's Pod; remove and close leave no Pod behind.
 */
import { randomBytes } from "node:crypto";
import { afterAll, expect, it } from "vitest";
import type { SandboxBackend } from "../../src/sandbox/backend.js";
import { openSandboxBackend } from "../../src/sandbox/backends.js";
import type { Sandbox } from "../../src/sandbox/index.js";
import { replicaLeaseName } from "../../src/sandbox/kubernetes/index.js";
import { TEST_IMAGE } from "../helpers/backend.js";
import {
  describeK8s,
  podLeftovers,
  removePods,
  TEST_NAMESPACE,
  TEST_RUNTIME_CLASS,
  TEST_SERVE_BACKEND,
  testCluster,
} from "../helpers/k8s.js";
import { run } from "../helpers/sandbox-fixture.js";

const ID = `test-backend-${randomBytes(3).toString("hex")}`;
const TENANT = `test-kb-${randomBytes(3).toString("hex")}`;

describeK8s("Kubernetes SandboxBackend", () => {
  const { leases } = testCluster();
  const config = {
    ...TEST_SERVE_BACKEND,
    startTimeoutMs: 90_000,
    ...(TEST_RUNTIME_CLASS ? { runtimeClassName: TEST_RUNTIME_CLASS } : {}),
    replicaId: ID,
    leaseHolder: "host-a-0123456789ab",
  };
  const opened: SandboxBackend[] = [];
  const made: Sandbox[] = [];
  const logged: string[] = [];

  afterAll(async () => {
    for (const s of made) await s.destroy().catch(() => undefined);
    for (const b of opened) await b.close();
    await removePods(TENANT);
    await leases
      .deleteNamespacedLease({ name: replicaLeaseName(ID), namespace: TEST_NAMESPACE })
      .catch(() => undefined);
  });

  it("holds the replica Lease while open, claims cold then from the pool, lists, adopts only its own, and leaves nothing at close", async () => {
    const backend = await openSandboxBackend(config, {
      // A spare outlives the claimer's default lifetime (24 h), or the claim starts cold.
      warmPool: { size: 1, maxIdleMs: 600_000, ttlMs: 26 * 3_600_000 },
      log: (line) => logged.push(line),
    });
    opened.push(backend);
    expect(backend.kind).toBe("kubernetes");
    expect(backend.scopes).toEqual([TEST_NAMESPACE]);
    const lease = await leases.readNamespacedLease({ name: replicaLeaseName(ID), namespace: TEST_NAMESPACE });
    expect(lease.spec?.holderIdentity).toBe("host-a-0123456789ab");

    const spec = TEST_IMAGE ? { image: TEST_IMAGE } : {};
    const cold = await backend.claim(spec, { tenant: TENANT, sessionId: "s-cold" });
    made.push(cold.sandbox);
    expect(cold.pooled).toBe(false);
    expect(await run(cold.sandbox, "echo cold")).toMatchObject({ exitCode: 0, stdout: "cold\n" });
    await expect.poll(() => backend.poolStats().idle, { timeout: 170_000, interval: 500 }).toBe(1);
    const warm = await backend.claim(spec, { tenant: TENANT, sessionId: "s-warm" });
    made.push(warm.sandbox);
    expect({ pooled: warm.pooled, logged }).toEqual({ pooled: true, logged: [] });
    expect(warm.sandbox.info.sessionId).toBe("s-warm");
    expect(await run(warm.sandbox, "echo warm")).toMatchObject({ exitCode: 0, stdout: "warm\n" });

    const listed = await backend.list([TENANT]);
    const ids = [cold.sandbox.info.containerId, warm.sandbox.info.containerId].sort();
    const own = listed.filter((s) => ids.includes(s.id)).sort((a, b) => a.id.localeCompare(b.id));
    expect(own.map((s) => [s.id, s.tenant, s.running, s.namespace])).toEqual(
      ids.map((id) => [id, TENANT, true, TEST_NAMESPACE]),
    );
    const request = {
      id: cold.sandbox.info.containerId,
      sessionId: "s-cold",
      tenant: TENANT,
      image: cold.sandbox.info.image,
      workspaceMode: "copy" as const,
      createdAt: cold.sandbox.info.createdAt,
      expiresAt: cold.sandbox.info.expiresAt,
    };
    expect(await backend.adopt({ ...request, tenant: "test-other" })).toBeNull();
    expect(await backend.adopt({ ...request, sessionId: "s-other" })).toBeNull();

    const coldEntry = own.find((s) => s.id === cold.sandbox.info.containerId);
    expect(coldEntry).toBeDefined();
    if (coldEntry) await backend.remove(coldEntry);
    await backend.close();
    await expect(
      leases.readNamespacedLease({ name: replicaLeaseName(ID), namespace: TEST_NAMESPACE }),
    ).rejects.toMatchObject({ code: 404 });
    await warm.sandbox.destroy();
    expect(await podLeftovers(TENANT)).toEqual([]);
  });

  it("refuses another holder of the same replica id while one is open", async () => {
    const first = await openSandboxBackend(config, {});
    opened.push(first);
    await expect(openSandboxBackend({ ...config, leaseHolder: "host-b-0123456789ab" }, {})).rejects.toThrow(
      `backend.replicaId '${ID}' is in use in namespace ${TEST_NAMESPACE} by another live warden serve (holder host-a-0123456789ab)`,
    );
    await first.close();
    const second = await openSandboxBackend({ ...config, leaseHolder: "host-b-0123456789ab" }, {});
    opened.push(second);
    await second.close();
  });
});
