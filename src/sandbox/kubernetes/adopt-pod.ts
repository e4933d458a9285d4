/**
 * Taking over a running sandbox Pod after the controller restarted (the Kubernetes side of
 * ../adopt.ts): a new exec channel (start-pod.ts's connectHelper). `warden-helper --channel`
 * SIGKILLs every other process of the container but PID 1 before it serves: the dead controller's
 * channel, if its helper still runs, and every command it started (images/sandbox/helper/channel.go),
 * so two channels never serve one Pod and nothing the dead controller started keeps running.
 */
import type { ChannelClient } from "../channel/protocol/client.js";
import type { KubernetesCluster } from "./cluster.js";
import { connectHelper } from "./start-pod.js";

/**
 * Stops what the dead controller left running in Pod `name` and opens a new channel to it (see
 * the file comment). Rejects SandboxError when the helper does not answer or is too old
 * (connectHelper); the caller then drops the session.
 */
export function adoptPod(
  cluster: KubernetesCluster,
  name: string,
  options: { log?: (line: string) => void } = {},
): Promise<ChannelClient> {
  return connectHelper(cluster, name, options);
}
