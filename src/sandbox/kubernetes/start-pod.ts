/**
 * Starting a sandbox Pod: create it, wait until its container runs (with a clear error when it
 * cannot: image not pullable, unschedulable, failed, or too slow), start warden-helper's channel
 * through the exec API (transport.ts) and ping it. Any failure or abort deletes the Pod before
 * rejecting, so nothing is left behind.
 */
import type { V1Pod } from "@kubernetes/client-node";
import { NoRoomError, SandboxError, WardenError } from "../../errors.js";
import { isAbortError, throwIfAborted } from "../../util/index.js";
import { ChannelClient } from "../channel/protocol/client.js";
import { awaitHelper } from "../channel/protocol/handshake.js";
import { fromKubeError, type KubernetesCluster } from "./cluster.js";
import { deletePod } from "./delete-pod.js";
import { channelCommand, HelperSilentError } from "./helper-copy.js";
import { POD_REQUESTS } from "./pod-spec.js";
import { execChannel, type HelperLog } from "./transport.js";

/**
 * The warden-helper version the Kubernetes backend needs: the exec-stream channel (`--init` as
 * PID 1, `--channel` through pods/exec; images/sandbox/helper/channel.go) from version 3, which
 * from version 4 caps every file its commands write at the larger tmpfs size (RLIMIT_FSIZE,
 * images/sandbox/helper/fsize.go). A version 2 helper would neither replace a stale channel nor
 * stop its commands when the stream ends; a version 3 one would let a command write without
 * bound to the node's disk through /dev/termination-log; a version 4 one would let the
 * preallocation ioctls (FS_IOC_RESVSP64 and kin) past its fallocate filter, and its image has no
 * execute-only copy, so a command could trace a re-opened channel helper (version 5: seccomp.go,
 * images/sandbox/Dockerfile's /usr/local/libexec/warden/warden-helper). Versions 5 and 6 let a
 * command make a user namespace under gVisor (unshare -U), and their images lack the root-only
 * directory of the termination message file (version 7: images/sandbox/helper/userns.go,
 * pod-spec.ts TERMINATION_MESSAGE_PATH).
 */
export const EXEC_CHANNEL_VERSION = 7;

/** Default of KubernetesCluster.startTimeoutMs: 120 s (a cold image pull may take a while). */
const DEFAULT_POD_START_TIMEOUT_MS = 120_000;

/** Waiting reasons after which a Pod will not start by itself (kubelet's container states). */
const HOPELESS_REASONS = new Set([
  "ErrImageNeverPull",
  "ErrImagePull",
  "ImagePullBackOff",
  "InvalidImageName",
  "CreateContainerConfigError",
  "CreateContainerError",
  "RunContainerError",
  "CrashLoopBackOff",
]);

/**
 * What a Pod's status says: running, still starting (with the reason shown; `unscheduled` when
 * the reason is the scheduler's: no node takes the Pod yet), or failed for good.
 */
export type PodProgress =
  | { kind: "running" }
  | { kind: "starting"; detail: string; unscheduled?: true }
  | { kind: "failed"; detail: string };

/** Reads a Pod's status (pure): see PodProgress. */
export function podProgress(pod: V1Pod): PodProgress {
  const status = pod.status;
  const phase = status?.phase ?? "Pending";
  const container = status?.containerStatuses?.[0];
  if (phase === "Failed" || phase === "Succeeded") {
    const term = container?.state?.terminated;
    const why = term
      ? `exit ${term.exitCode}${term.reason ? ` (${term.reason})` : ""}`
      : (status?.reason ?? "");
    return { kind: "failed", detail: `phase ${phase}${why ? `: ${why}` : ""}` };
  }
  if (container?.state?.running) return { kind: "running" };
  const waiting = container?.state?.waiting;
  if (waiting?.reason && HOPELESS_REASONS.has(waiting.reason)) {
    return { kind: "failed", detail: `${waiting.reason}${waiting.message ? `: ${waiting.message}` : ""}` };
  }
  if (waiting?.reason) return { kind: "starting", detail: waiting.reason };
  const unscheduled = status?.conditions?.find((c) => c.type === "PodScheduled" && c.status === "False");
  if (unscheduled)
    return { kind: "starting", detail: unscheduled.message ?? "Unschedulable", unscheduled: true };
  return { kind: "starting", detail: phase };
}

/**
 * A Pod given up as soon as the scheduler reported that no node takes it (startPod's
 * `failUnscheduled`, used for warm pool spares, which must not wait for room that sessions need).
 * `scheduler` is the scheduler's message (PodScheduled=False), e.g. "0/1 nodes are available:
 * 1 Insufficient cpu.".
 */
export class PodUnschedulableError extends NoRoomError {
  constructor(
    namespace: string,
    name: string,
    readonly scheduler: string,
  ) {
    super(
      `Pod ${namespace}/${name} was withdrawn: no node takes it (the scheduler: "${scheduler}"). Free room on a node (end sessions: each sandbox Pod requests ${POD_REQUESTS.cpu} CPU and ${Number(POD_REQUESTS.memory) / 1024 / 1024} MiB of memory, and a node runs at most its maxPods Pods) or add nodes.`,
    );
  }
}

/** Options of startPod. */
export interface StartPodOptions {
  signal?: AbortSignal;
  log?: HelperLog;
  /**
   * Give the Pod up (delete it, reject PodUnschedulableError) as soon as the scheduler reports
   * that no node takes it, instead of waiting up to startTimeoutMs for room. Default false.
   */
  failUnscheduled?: boolean;
}

/**
 * Creates `pod` and returns its helper's channel once the container runs and the helper answered.
 * Rejects SandboxError naming the Pod and why (failed state, or still `detail` after
 * startTimeoutMs: NoRoomError when still unscheduled; PodUnschedulableError at once with
 * `failUnscheduled`; ResourceQuotaExceededError from the create), AbortError when `signal`
 * fires; the Pod is deleted first in every case.
 */
export async function startPod(
  cluster: KubernetesCluster,
  pod: V1Pod,
  options: StartPodOptions = {},
): Promise<ChannelClient> {
  const { core, namespace } = cluster;
  const name = pod.metadata?.name ?? "";
  const { signal } = options;
  throwIfAborted(signal);
  try {
    await core.createNamespacedPod({ namespace, body: pod });
  } catch (err) {
    throw fromKubeError(err, `creating Pod ${namespace}/${name}`);
  }
  try {
    await waitRunning(cluster, name, signal, options.failUnscheduled === true);
    return await connectHelper(cluster, name, { ...options, fresh: true });
  } catch (err) {
    await deletePod(cluster, name).catch(() => {});
    if (isAbortError(err)) throw err;
    throw err instanceof WardenError ? err : fromKubeError(err, `starting Pod ${namespace}/${name}`);
  }
}

/**
 * The error of a Pod still starting after `timeoutMs` (pure). Unscheduled: NoRoomError, no node
 * took it, with the scheduler's reason (a full node: its CPU or memory requests, or its maxPods; a node selector
 * no node matches) and what frees room. Else the container's waiting reason (or the phase).
 */
export function startTimeoutError(
  namespace: string,
  name: string,
  timeoutMs: number,
  progress: { detail: string; unscheduled?: true },
): SandboxError | NoRoomError {
  if (progress.unscheduled)
    return new NoRoomError(
      `Pod ${namespace}/${name} was not scheduled within ${timeoutMs} ms: no node takes it (the scheduler: "${progress.detail}"). Free room on a node (end sessions or warm pool spares: each sandbox Pod requests ${POD_REQUESTS.cpu} CPU and ${Number(POD_REQUESTS.memory) / 1024 / 1024} MiB of memory, and a node runs at most its maxPods Pods) or add nodes; backend.startTimeoutMs is how long a create waits for room.`,
    );
  return new SandboxError(
    `Pod ${namespace}/${name} did not run within ${timeoutMs} ms (still ${progress.detail}); check the node (kubectl describe pod) or raise backend.startTimeoutMs.`,
  );
}

/** Polls the Pod every 250 ms until it runs; rejects as startPod describes. */
async function waitRunning(
  cluster: KubernetesCluster,
  name: string,
  signal: AbortSignal | undefined,
  failUnscheduled: boolean,
): Promise<void> {
  const timeoutMs = cluster.startTimeoutMs ?? DEFAULT_POD_START_TIMEOUT_MS;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    throwIfAborted(signal);
    const pod = await cluster.core.readNamespacedPod({ name, namespace: cluster.namespace });
    const progress = podProgress(pod);
    if (progress.kind === "running") return;
    if (progress.kind === "failed")
      throw new SandboxError(`Pod ${cluster.namespace}/${name} cannot start: ${progress.detail}.`);
    if (failUnscheduled && progress.unscheduled)
      throw new PodUnschedulableError(cluster.namespace, name, progress.detail);
    if (Date.now() > deadline) throw startTimeoutError(cluster.namespace, name, timeoutMs, progress);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * Starts Pod `name`'s channel (`warden-helper --channel` through the exec API; it replaces any
 * channel already running there, with the commands that one started) and pings it until it
 * answers (every 250 ms, up to 10 s), running the helper copy helper-copy.ts chose for the Pod
 * (`fresh`: a Pod just created, whose first channel this is). Resolves with the connected client;
 * rejects SandboxError when the helper does not answer or is older than EXEC_CHANNEL_VERSION.
 */
export async function connectHelper(
  cluster: KubernetesCluster,
  name: string,
  options: { signal?: AbortSignal; log?: HelperLog; fresh?: boolean } = {},
): Promise<ChannelClient> {
  const command = await channelCommand(cluster, name, options);
  const transport = await execChannel(cluster.exec, cluster.namespace, name, { ...options, command });
  const client = new ChannelClient(transport, {
    containerId: name,
    ...(options.log ? { log: options.log } : {}),
  });
  let version: number;
  try {
    const pong = await awaitHelper(client, {
      timeoutMs: 10_000,
      retryPingMs: 250,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    version = Number(pong.version);
  } catch (err) {
    client.close();
    if (options.signal?.aborted) throw err;
    throw new HelperSilentError(cluster.namespace, name, (err as Error).message, err);
  }
  if (!(version >= EXEC_CHANNEL_VERSION)) {
    client.close();
    throw new SandboxError(
      `warden-helper in Pod ${cluster.namespace}/${name} is version ${version || "?"}; the Kubernetes backend needs version ${EXEC_CHANNEL_VERSION} or later (an exec-stream channel that caps file sizes and refuses the preallocation calls and user namespaces, an image whose termination message file (a file of the node's disk) no command can reach, and an execute-only copy that commands cannot trace): rebuild the image (warden images build) and load it into the cluster.`,
    );
  }
  return client;
}
