/**
 * `createKubernetesSandbox`: validates options (the same resolveSandboxOptions as Docker, plus
 * what a Pod cannot do), builds the hardened Pod, starts it with warden-helper connected
 * (start-pod.ts), then copies the workspace in over the channel (`finishPodSandbox`, also the warm
 * pool's hand-over). Any failure or abort deletes the Pod, so nothing is left running.
 */
import { randomUUID } from "node:crypto";
import { InvalidArgumentError } from "../../errors.js";
import { isAbortError, throwIfAborted } from "../../util/index.js";
import type { ChannelClient } from "../channel/protocol/client.js";
import { channelUntar } from "../channel/protocol/files.js";
import { type Heartbeat, startHeartbeat } from "../channel/protocol/heartbeat.js";
import { LABEL } from "../labels.js";
import { type ResolvedSandboxOptions, resolveSandboxOptions } from "../options.js";
import { uidRegistry } from "../sandbox-uid.js";
import { pingSpare } from "../spare-ping.js";
import type { SandboxOptions } from "../types.js";
import { WORKSPACE_DIR } from "../types.js";
import { packDirectory, type WorkspaceHashes } from "../workspace-copy.js";
import { workspaceReadError } from "../workspace-size.js";
import { fromKubeError, type KubernetesCluster } from "./cluster.js";
import { deletePod, podUidOwner } from "./delete-pod.js";
import { KubernetesSandbox } from "./kubernetes-sandbox.js";
import { ensureDenyAllPolicy } from "./network-policy.js";
import { DEFAULT_HEARTBEAT_MS } from "./pod-channel.js";
import { podSandboxInfo } from "./pod-info.js";
import { podName } from "./pod-labels.js";
import { buildPodSpec } from "./pod-spec.js";
import { type StartPodOptions, startPod } from "./start-pod.js";

/** Largest packed workspace copied into a Pod (one channel frame): 48 MiB. */
const POD_WORKSPACE_MAX_BYTES = 48 * 1024 * 1024;

/** A running sandbox Pod with an empty workspace and its helper connected (a warm pool entry). */
export interface PreparedPod {
  name: string;
  channel: ChannelClient;
  /**
   * Pings the helper after `cluster.heartbeatMs` of quiet while the Pod waits (a warm pool spare
   * may wait longer than the node's streaming idle timeout); an unanswered ping closes `channel`
   * (the pool then discards the spare). finishPodSandbox stops it: the session's PodChannel beats from then on.
   */
  heartbeat: Heartbeat;
  /** The host uid (= gid) its processes run as (../sandbox-uid.ts), also its UID_LABEL. */
  uid: number;
  createdAt: Date;
  expiresAt: Date;
  opts: ResolvedSandboxOptions;
}

/**
 * Throws InvalidArgumentError for options a Pod does not support: a bind-mounted workspace
 * (ro/rw: host paths do not exist on a cluster node), extra mounts, network egress, and runtime
 * runsc without a RuntimeClass configured.
 */
export function requirePodOptions(opts: ResolvedSandboxOptions, cluster: KubernetesCluster): void {
  if (opts.workspaceMode !== "copy")
    throw new InvalidArgumentError(
      `workspace mode "${opts.workspaceMode}" bind-mounts a host directory, which a Kubernetes sandbox cannot; use mode "copy".`,
    );
  if (opts.mounts.length > 0)
    throw new InvalidArgumentError(
      "mounts bind host directories, which a Kubernetes sandbox cannot; drop them.",
    );
  if (opts.network.mode !== "none")
    throw new InvalidArgumentError(
      `network mode "${opts.network.mode}" is not available on the Kubernetes backend yet; use { mode: "none" }.`,
    );
  if (opts.runtime === "runsc" && !cluster.runtimeClassName)
    throw new InvalidArgumentError(
      'runtime "runsc" on Kubernetes needs backend.runtimeClassName (e.g. gvisor), which sets the Pods\' runtime.',
    );
}

/**
 * Creates the Pod for `opts` and connects its helper, after making sure its namespace has the
 * deny-all NetworkPolicy (ensureDenyAllPolicy: no Pod runs before it). `poolKey` marks a warm pool
 * spare. Rejects like startPod (SandboxError, AbortError) and ensureDenyAllPolicy (SandboxError
 * naming the RBAC rights), InvalidArgumentError for unsupported options.
 */
export async function preparePod(
  cluster: KubernetesCluster,
  opts: ResolvedSandboxOptions,
  options: StartPodOptions & { poolKey?: string } = {},
): Promise<PreparedPod> {
  requirePodOptions(opts, cluster);
  await ensureDenyAllPolicy(cluster);
  throwIfAborted(options.signal);
  const createdAt = new Date(Math.floor(Date.now() / 1000) * 1000);
  const expiresAt = new Date(createdAt.getTime() + opts.ttlMs);
  const name = podName(opts.sessionId);
  const uid = uidRegistry.claim(opts.workspaceMode);
  uidRegistry.bind(podUidOwner(cluster.namespace, name), uid);
  const pod = buildPodSpec({
    uid,
    name,
    namespace: cluster.namespace,
    image: opts.image,
    limits: opts.limits,
    ...(cluster.runtimeClassName ? { runtimeClassName: cluster.runtimeClassName } : {}),
    ...(cluster.imagePullPolicy ? { imagePullPolicy: cluster.imagePullPolicy } : {}),
    state: {
      sessionId: opts.sessionId,
      tenant: opts.tenant,
      controller: opts.controllerId,
      createdAt,
      expiresAt,
      ...(options.poolKey ? { poolKey: options.poolKey } : {}),
      ...(cluster.replicaId ? { replica: cluster.replicaId } : {}),
    },
  });
  const channel = await startPod(cluster, pod, options).catch((err: unknown) => {
    uidRegistry.releaseOwner(podUidOwner(cluster.namespace, name));
    throw err;
  });
  const heartbeat = startHeartbeat(channel, {
    everyMs: cluster.heartbeatMs ?? DEFAULT_HEARTBEAT_MS,
    onUnanswered: (reason) => channel.close(`heartbeat: ${reason}`),
  });
  return { name, channel, heartbeat, uid, createdAt, expiresAt, opts };
}

/**
 * Copies the workspace into `prepared` (copy mode, at most POD_WORKSPACE_MAX_BYTES packed) and
 * wraps it as the KubernetesSandbox of the session `opts` names. A warm pool spare handed over to
 * another session (its `pool-<uuid>` id is not `opts.sessionId`) gets that session's expiry, now +
 * `opts.ttlMs`, in its expiry annotation, so gc and reconcile judge the session, not the spare;
 * before anything, its helper must answer a ping within SPARE_PING_TIMEOUT_MS, else SandboxError
 * (the pool then discards it and creates a cold Pod: src/sandbox/pool/warm-pool.ts claim). Deletes the Pod
 * when it fails.
 */
export async function finishPodSandbox(
  cluster: KubernetesCluster,
  prepared: PreparedPod,
  opts: ResolvedSandboxOptions,
  signal?: AbortSignal,
): Promise<KubernetesSandbox> {
  try {
    throwIfAborted(signal);
    if (opts.sessionId !== prepared.opts.sessionId)
      await pingSpare(prepared.channel, `warm-pool spare Pod ${cluster.namespace}/${prepared.name}`, signal);
    const baseline = await copyWorkspaceIn(prepared.channel, opts, signal);
    const expiresAt =
      opts.sessionId === prepared.opts.sessionId
        ? prepared.expiresAt
        : await setPodExpiry(cluster, prepared.name, new Date(Date.now() + opts.ttlMs));
    const info = podSandboxInfo(
      {
        name: prepared.name,
        sessionId: opts.sessionId,
        tenant: opts.tenant,
        image: opts.image,
        createdAt: prepared.createdAt,
        expiresAt,
        uid: prepared.uid,
      },
      cluster,
    );
    prepared.heartbeat.stop();
    return new KubernetesSandbox(info, cluster, prepared.channel, baseline);
  } catch (err) {
    prepared.channel.close();
    await deletePod(cluster, prepared.name).catch(() => {});
    if (isAbortError(err)) throw err;
    throw err;
  }
}

/**
 * Sets Pod `name`'s expiry annotation (LABEL.expires) to `expiresAt` with a JSON merge patch
 * (RFC 7386: only that key changes); resolves with it. Rejects SandboxError when the API refuses.
 */
async function setPodExpiry(cluster: KubernetesCluster, name: string, expiresAt: Date): Promise<Date> {
  const body = { metadata: { annotations: { [LABEL.expires]: expiresAt.toISOString() } } };
  try {
    await cluster.core.patchNamespacedPod({ name, namespace: cluster.namespace, body }, cluster.mergePatch);
  } catch (err) {
    throw fromKubeError(err, `setting the expiry of Pod ${cluster.namespace}/${name}`);
  }
  return expiresAt;
}

/** Packs the host workspace and has the helper extract it; returns the baseline hashes. */
async function copyWorkspaceIn(
  channel: ChannelClient,
  opts: ResolvedSandboxOptions,
  signal?: AbortSignal,
): Promise<WorkspaceHashes> {
  const hostPath = opts.workspaceHostPath;
  if (!hostPath) return new Map();
  const packed = packDirectory(hostPath, opts.workspaceExclude ? { exclude: opts.workspaceExclude } : {});
  const chunks: Buffer[] = [];
  let bytes = 0;
  try {
    for await (const chunk of packed.stream) {
      bytes += (chunk as Buffer).length;
      if (bytes > POD_WORKSPACE_MAX_BYTES) {
        packed.stream.destroy();
        throw new InvalidArgumentError(
          `workspace ${hostPath} packs to more than ${POD_WORKSPACE_MAX_BYTES} bytes, the most a Kubernetes sandbox copies in; exclude build outputs or use the Docker backend.`,
        );
      }
      chunks.push(chunk as Buffer);
    }
    await packed.done;
  } catch (err) {
    if (err instanceof InvalidArgumentError) throw err;
    throw workspaceReadError(hostPath, err as Error);
  }
  await channelUntar(channel, WORKSPACE_DIR, Buffer.concat(chunks), signal ? { signal } : {});
  return packed.hashes;
}

/**
 * Creates a hardened sandbox Pod on `cluster`. Rejects InvalidArgumentError / NotFoundError for bad
 * or unsupported options (naming the field), SandboxError for API failures and Pods that cannot
 * start (naming why), AbortError when `signal` fires; the Pod is gone on every rejection.
 */
export async function createKubernetesSandbox(
  options: SandboxOptions,
  cluster: KubernetesCluster,
): Promise<KubernetesSandbox> {
  const opts = await resolveSandboxOptions(options, options.sessionId ?? randomUUID());
  if (options.execPath === "docker-exec")
    throw new InvalidArgumentError(
      'execPath "docker-exec" is Docker only; a Kubernetes sandbox uses "channel".',
    );
  const prepared = await preparePod(cluster, opts, options.signal ? { signal: options.signal } : {});
  return finishPodSandbox(cluster, prepared, opts, options.signal);
}
