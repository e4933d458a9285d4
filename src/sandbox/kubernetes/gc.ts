/**
 * `warden gc --namespace`: deletes warden sandbox Pods of a namespace that are expired, or whose
 * controller process is dead on this host, judged by their annotations with the same rule as
 * Docker containers (../labels.ts staleReason). A Pod is labelled before it exists, so a crash
 * leaves nothing this cannot find.
 */
import type { GcOptions, GcRemoval } from "../gc-types.js";
import { staleReason } from "../labels.js";
import { fromKubeError, type KubernetesCluster } from "./cluster.js";
import { deletePod } from "./delete-pod.js";
import { podStateOf, WARDEN_POD_SELECTOR } from "./pod-labels.js";

/** Sweeps stale sandbox Pods of `cluster.namespace`. Rejects SandboxError when the API fails. */
export async function gcPods(cluster: KubernetesCluster, options: GcOptions = {}): Promise<GcRemoval[]> {
  const now = options.now ?? new Date();
  const removed: GcRemoval[] = [];
  let items: Awaited<ReturnType<KubernetesCluster["core"]["listNamespacedPod"]>>["items"];
  try {
    items = (
      await cluster.core.listNamespacedPod({
        namespace: cluster.namespace,
        labelSelector: WARDEN_POD_SELECTOR,
      })
    ).items;
  } catch (err) {
    throw fromKubeError(err, `listing warden Pods in namespace ${cluster.namespace}`);
  }
  for (const pod of items) {
    const name = pod.metadata?.name;
    const state = podStateOf(pod.metadata ?? {});
    if (!name || !state) continue;
    if (options.tenant !== undefined && state.tenant !== options.tenant) continue;
    const reason = staleReason(pod.metadata?.annotations, now);
    if (!reason) continue;
    if (!options.dryRun) await deletePod(cluster, name);
    removed.push({ kind: "pod", id: name, sessionId: state.sessionId, tenant: state.tenant, reason });
  }
  return removed;
}
