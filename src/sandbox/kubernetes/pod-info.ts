/**
 * The SandboxInfo of a sandbox Pod, the same for a Pod just created (create.ts) and one adopted
 * after a restart (adopt-pod.ts): a copy-mode workspace, the channel, no network,
 * and as its runtime what warden knows runs the Pod, its RuntimeClass.
 */
import type { SandboxInfo } from "../types.js";
import { WORKSPACE_DIR } from "../types.js";
import type { KubernetesCluster } from "./cluster.js";

/**
 * SandboxInfo.runtime of a Pod without a RuntimeClass: the node's default runtime handler, which the
 * API does not name (containerd's `default_runtime_name`, runc on most nodes).
 */
const POD_DEFAULT_RUNTIME = "default";

/** What identifies one sandbox Pod: its name, session, tenant, image, lifetime and uid. */
export interface PodInfoFields {
  name: string;
  sessionId: string;
  tenant: string;
  image: string;
  createdAt: Date;
  expiresAt: Date;
  /** The host uid (= gid) the Pod runs as (its runAsUser, ../sandbox-uid.ts). */
  uid: number;
}

/**
 * The SandboxInfo of Pod `fields.name` on `cluster`. `runtime` is the Pods' RuntimeClass name
 * (`cluster.runtimeClassName`, e.g. `gvisor`; which handler the node runs for it, e.g. runsc, is the
 * node's configuration and not seen through the API), or POD_DEFAULT_RUNTIME when the Pods have
 * none; never the OCI runtime the options asked for, which a Pod does not choose.
 */
export function podSandboxInfo(
  fields: PodInfoFields,
  cluster: Pick<KubernetesCluster, "runtimeClassName">,
): SandboxInfo {
  return {
    containerId: fields.name,
    sessionId: fields.sessionId,
    tenant: fields.tenant,
    image: fields.image,
    runtime: cluster.runtimeClassName ?? POD_DEFAULT_RUNTIME,
    workspaceMode: "copy",
    roots: [WORKSPACE_DIR],
    createdAt: fields.createdAt,
    expiresAt: fields.expiresAt,
    execPath: "channel",
    channelTransport: "exec-stream",
    uid: fields.uid,
    network: { mode: "none" },
  };
}
