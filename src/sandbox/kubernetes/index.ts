/**
 * The Kubernetes sandbox: a session is a hardened Pod (pod-spec.ts) whose warden-helper speaks the
 * same channel protocol as on Docker, over a pods/exec stream (transport.ts; not the Pod's attach
 * stream, whose output the node logs to disk). No Docker code here
 * (test/unit/sandbox/kubernetes/imports.test.ts).
 */

export { adoptPod } from "./adopt-pod.js";
export { openKubernetesBackend } from "./backend.js";
export { loadKubernetesClient } from "./client.js";
export {
  apiStatus,
  connectCluster,
  fromKubeError,
  HEARTBEAT_MS_RANGE,
  isNamespaceName,
  type KubernetesCluster,
  type KubernetesClusterOptions,
  ResourceQuotaExceededError,
} from "./cluster.js";
export {
  createKubernetesSandbox,
  finishPodSandbox,
  POD_WORKSPACE_MAX_BYTES,
  type PreparedPod,
  preparePod,
  requirePodOptions,
} from "./create.js";
export { deletePod } from "./delete-pod.js";
export { gcPods } from "./gc.js";
export { KubernetesSandbox } from "./kubernetes-sandbox.js";
export {
  buildDenyAllPolicy,
  DENY_ALL_POLICY,
  ensureDenyAllPolicy,
  isDenyAllPolicy,
} from "./network-policy.js";
export { DEFAULT_HEARTBEAT_MS, PodChannel } from "./pod-channel.js";
export { type PodExecResult, podExec } from "./pod-exec.js";
export { POD_DEFAULT_RUNTIME, type PodInfoFields, podSandboxInfo } from "./pod-info.js";
export {
  isLabelValue,
  MANAGED_BY,
  POD_PIDS,
  POD_POOL_KEY,
  POD_REPLICA,
  type PodState,
  podAnnotations,
  podLabels,
  podName,
  podStateOf,
  poolKeyLabel,
  replicaSelector,
  requireLabelValue,
  WARDEN_POD_SELECTOR,
} from "./pod-labels.js";
export {
  buildPodSpec,
  cpuQuantity,
  INIT_COMMAND,
  type PodSpecOptions,
  podUidOf,
  SANDBOX_CONTAINER,
} from "./pod-spec.js";
export { type KubernetesPoolOptions, kubernetesPoolBackend } from "./pool.js";
export {
  type ChannelEvent,
  channelEventLine,
  DEFAULT_RECONNECT_POLICY,
  podReachable,
  type ReconnectPolicy,
  reconnectDelayMs,
} from "./reconnect-policy.js";
export {
  acquireReplicaLease,
  ReplicaIdInUseError,
  type ReplicaLease,
  type ReplicaLeaseOptions,
  replicaLeaseName,
} from "./replica-lease.js";
export {
  DEFAULT_REQUEST_TIMEOUT_MS,
  KubernetesRequestCredentialsTimeoutError,
  KubernetesRequestTimeoutError,
  REQUEST_TIMEOUT_MS_RANGE,
  requestDeadline,
  requestTimeoutError,
} from "./request-deadline.js";
export {
  connectHelper,
  DEFAULT_POD_START_TIMEOUT_MS,
  EXEC_CHANNEL_VERSION,
  type PodProgress,
  PodUnschedulableError,
  podProgress,
  type StartPodOptions,
  startPod,
  startTimeoutError,
} from "./start-pod.js";
export {
  checkNamespaces,
  type ServerCluster,
  type TenantClusters,
  tenantClusters,
} from "./tenant-clusters.js";
export {
  allNamespaces,
  checkTenantNamespaces,
  type TenantNamespaces,
  tenantNamespace,
  tenantsIn,
} from "./tenant-namespaces.js";
export { CHANNEL_COMMAND, execChannel, exitCodeOf } from "./transport.js";
