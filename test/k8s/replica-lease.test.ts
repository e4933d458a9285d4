/**
 * The Lease a `warden serve` replica holds on its id, on a real API server: a second holder is
 * refused while the first renews, the same holder (a restart on the same host and state directory)
 * takes it at once, a Lease nobody renews is taken over after one lease duration, and release
 * deletes it.
 */
import { randomBytes } from "node:crypto";
import { afterAll, expect, it } from "vitest";
import {
  acquireReplicaLease,
  type ReplicaLease,
  replicaLeaseName,
} from "../../src/sandbox/kubernetes/index.js";
import { describeK8s, TEST_NAMESPACE, testCluster } from "../helpers/k8s.js";

const ID = `test-lease-${randomBytes(3).toString("hex")}`;

describeK8s("replica Lease", () => {
  const { leases } = testCluster();
  const namespace = TEST_NAMESPACE;
  const name = replicaLeaseName(ID);
  const held: ReplicaLease[] = [];
  const acquire = async (holder: string) => {
    const lease = await acquireReplicaLease({
      leases,
      namespace,
      replicaId: ID,
      holder,
      durationS: 2,
      renewMs: 400,
    });
    held.push(lease);
    return lease;
  };
  const holderNow = async () => (await leases.readNamespacedLease({ name, namespace })).spec?.holderIdentity;

  afterAll(async () => {
    for (const l of held) await l.release();
    await leases.deleteNamespacedLease({ name, namespace }).catch(() => undefined);
  });

  it("refuses a second holder while the first renews; the same holder takes it at once", async () => {
    const first = await acquire("host-a-0123456789ab");
    expect(await holderNow()).toBe("host-a-0123456789ab");
    const started = Date.now();
    await expect(acquire("host-b-0123456789ab")).rejects.toThrow(
      `backend.replicaId '${ID}' is in use in namespace ${namespace} by another live warden serve (holder host-a-0123456789ab); give this replica its own replicaId (each replica needs a different one).`,
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
    const restarted = Date.now();
    await acquire("host-a-0123456789ab");
    expect(Date.now() - restarted).toBeLessThan(2000);
    await first.release();
    await expect(leases.readNamespacedLease({ name, namespace })).rejects.toMatchObject({ code: 404 });
  });

  it("takes over a Lease nobody renews after one lease duration", async () => {
    await leases.createNamespacedLease({
      namespace,
      body: {
        metadata: { name },
        spec: { holderIdentity: "dead-host-0123456789ab", leaseDurationSeconds: 2 },
      },
    });
    const started = Date.now();
    const lease = await acquire("host-c-0123456789ab");
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
    expect(await holderNow()).toBe("host-c-0123456789ab");
    await lease.release();
    await expect(leases.readNamespacedLease({ name, namespace })).rejects.toMatchObject({ code: 404 });
  });
});
