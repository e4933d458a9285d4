/**
 * Taking over a running sandbox Pod after the controller restarted (the Kubernetes side of
 * ../docker/adopt.ts): a new exec channel (start-pod.ts's connectHelper). `warden-helper --channel`
 * SIGKILLs every other process of the container but PID 1 before it serves: the dead controller's
 * channel, if its helper still runs, and every command it started (images/sandbox/helper/channel.go),
 * so two channels never serve one Pod and nothing the dead controller started keeps running.
 * `adoptPodSandbox` decides first whether the Pod may be taken over at all: only in the request's
 * tenant's namespace, only this replica's, only its session's (or a warm pool spare it claimed).
 */
import type { AdoptRequest } from "../backend.js";
import type { ChannelClient } from "../channel/protocol/client.js";
import { baselineOf } from "../workspace-baseline.js";
import type { KubernetesCluster } from "./cluster.js";
import { KubernetesSandbox } from "./kubernetes-sandbox.js";
import { podSandboxInfo } from "./pod-info.js";
import { type PodState, podStateOf } from "./pod-labels.js";
import { podUidOf } from "./pod-spec.js";
import { connectHelper } from "./start-pod.js";
import type { TenantClusters } from "./tenant-clusters.js";

/**
 * Stops what the dead controller left running in Pod `name` and opens a new channel to it (see
 * the file comment). Rejects SandboxError when the helper does not answer or is too old
 * (connectHelper); the caller then drops the session.
 */
function adoptPod(
  cluster: KubernetesCluster,
  name: string,
  options: { log?: (line: string) => void } = {},
): Promise<ChannelClient> {
  return connectHelper(cluster, name, options);
}

/**
 * The KubernetesSandbox of Pod `request.id`, taken over for session `request.sessionId`, or null
 * when it cannot be used: not found in the namespace of `request.tenant` (a session never reaches
 * another tenant's Pods), not Running, another replica's (even when a record names it: a copied
 * stateDir), another tenant's or session's (a Pod claimed from the warm pool keeps the `pool-<uuid>`
 * session it was created with, and passes), or its helper does not answer (logged). Its baseline
 * is `request.workspaceHostPath` read again (what changedPaths compares with).
 */
export async function adoptPodSandbox(
  clusters: TenantClusters,
  request: AdoptRequest,
  log?: (line: string) => void,
): Promise<KubernetesSandbox | null> {
  const name = request.id;
  const cluster = clusters.of(request.tenant);
  let state: PodState | null;
  let uid: number;
  try {
    const pod = await cluster.core.readNamespacedPod({ name, namespace: cluster.namespace });
    state = pod.status?.phase === "Running" ? podStateOf(pod.metadata ?? {}) : null;
    uid = podUidOf(pod);
  } catch {
    return null;
  }
  const sessionOk = state && (state.sessionId === request.sessionId || state.poolKey !== undefined);
  const ownPod = state?.replica === clusters.main.replicaId;
  if (!state || !ownPod || !sessionOk || state.tenant !== request.tenant) return null;
  let channel: ChannelClient;
  try {
    channel = await adoptPod(cluster, name, log ? { log } : {});
  } catch (err) {
    log?.(`session ${request.sessionId}: Pod ${name} cannot be adopted (${(err as Error).message})`);
    return null;
  }
  const info = podSandboxInfo(
    {
      name,
      sessionId: request.sessionId,
      tenant: request.tenant,
      image: request.image,
      createdAt: state.createdAt,
      expiresAt: state.expiresAt,
      uid,
    },
    cluster,
  );
  const baseline = await baselineOf(request.workspaceHostPath);
  return new KubernetesSandbox(info, cluster, channel, baseline, log);
}
