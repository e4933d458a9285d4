/**
 * Deleting a sandbox Pod and waiting until it is gone: what destroy, a failed start and gc's
 * removals share.
 */
import { SandboxError } from "../../errors.js";
import { uidRegistry } from "../sandbox-uid.js";
import { apiStatus, fromKubeError, type KubernetesCluster } from "./cluster.js";
import { forgetHelperCopy } from "./helper-copy.js";

/** How long deletePod waits for a deleted Pod to be gone (ms). */
const DELETE_WAIT_MS = 60_000;

/**
 * Deletes Pod `name` with grace 0 and waits until the API no longer returns it (at most 60 s,
 * polling every 200 ms). A Pod already gone is success. Rejects SandboxError when the delete is
 * refused or the Pod is still there after the wait. Once it is gone, its uid is free again (sandbox-uid.ts) and its helper copy forgotten.
 */
export async function deletePod(cluster: KubernetesCluster, name: string): Promise<void> {
  await deleteAndWait(cluster, name);
  uidRegistry.releaseOwner(podUidOwner(cluster.namespace, name));
  forgetHelperCopy(cluster, name);
}

/** The uid registry's key of Pod `namespace`/`name` (Docker's are container ids). */
export function podUidOwner(namespace: string, name: string): string {
  return `pod:${namespace}/${name}`;
}

async function deleteAndWait(cluster: KubernetesCluster, name: string): Promise<void> {
  const { core, namespace } = cluster;
  try {
    await core.deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 0 });
  } catch (err) {
    if (apiStatus(err) === 404) return;
    throw fromKubeError(err, `deleting Pod ${namespace}/${name}`);
  }
  const deadline = Date.now() + DELETE_WAIT_MS;
  for (;;) {
    try {
      await core.readNamespacedPod({ name, namespace });
    } catch (err) {
      if (apiStatus(err) === 404) return;
      throw fromKubeError(err, `waiting for Pod ${namespace}/${name} to be deleted`);
    }
    if (Date.now() > deadline)
      throw new SandboxError(
        `Pod ${namespace}/${name} was still there ${DELETE_WAIT_MS} ms after its deletion; check the node's kubelet.`,
      );
    await new Promise((r) => setTimeout(r, 200));
  }
}
