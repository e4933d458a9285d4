/**
 * The Kubernetes sandbox: a session is a hardened Pod (pod-spec.ts) whose warden-helper speaks the
 * same channel protocol as on Docker, over a pods/exec stream (transport.ts; not the Pod's attach
 * stream, whose output the node logs to disk). openKubernetesBackend is its SandboxBackend
 * (backend.ts). No Docker code here (rule docker-free of test/unit/architecture-check.ts).
 */

export { openKubernetesBackend } from "./backend.js";
export { loadKubernetesClient } from "./client.js";
export {
  apiStatus,
  connectCluster,
  fromKubeError,
  HEARTBEAT_MS_RANGE,
  type KubernetesCluster,
  type KubernetesClusterOptions,
  ResourceQuotaExceededError,
} from "./cluster.js";
export { createKubernetesSandbox, finishPodSandbox, type PreparedPod, requirePodOptions } from "./create.js";
export { deletePod } from "./delete-pod.js";
export { gcPods } from "./gc.js";
export { KubernetesSandbox } from "./kubernetes-sandbox.js";
export {
  buildDenyAllPolicy,
  DENY_ALL_POLICY,
  ensureDenyAllPolicy,
  isDenyAllPolicy,
} from "./network-policy.js";
export { PodChannel } from "./pod-channel.js";
export { podExec } from "./pod-exec.js";
export { type PodInfoFields, podSandboxInfo } from "./pod-info.js";
export {
  isLabelValue,
  MANAGED_BY,
  podAnnotations,
  podLabels,
  podName,
  podStateOf,
  replicaSelector,
  WARDEN_POD_SELECTOR,
} from "./pod-labels.js";
export { buildPodSpec, cpuQuantity, type PodSpecOptions, podUidOf } from "./pod-spec.js";
export { kubernetesPoolBackend } from "./pool.js";
export {
  DEFAULT_RECONNECT_POLICY,
  podReachable,
  reconnectDelayMs,
} from "./reconnect-policy.js";
export {
  acquireReplicaLease,
  ReplicaIdInUseError,
  type ReplicaLease,
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
  EXEC_CHANNEL_VERSION,
  PodUnschedulableError,
  podProgress,
  startTimeoutError,
} from "./start-pod.js";
export { checkNamespaces, type ServerCluster, tenantClusters } from "./tenant-clusters.js";
export {
  allNamespaces,
  checkTenantNamespaces,
  type TenantNamespaces,
  tenantNamespace,
  tenantsIn,
} from "./tenant-namespaces.js";
export { execChannel, exitCodeOf } from "./transport.js";
