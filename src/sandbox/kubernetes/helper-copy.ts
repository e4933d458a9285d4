/**
 * Which warden-helper copy a Pod's exec channel runs, decided once per Pod. The execute-only copy
 * (SEALED_HELPER_PATH, root 0111) is non-dumpable from execve, so no command of the session can
 * ptrace it before its first prctl; gVisor loads no file its caller cannot read, and images built
 * before the copy lack it, so there the readable copy runs. The choice is made by running the
 * sealed copy's `--version` at the Pod's first channel, before any command of a session ran there,
 * and kept: in this process (per cluster and Pod) and in the Pod's annotation LABEL_HELPER, so a
 * re-opened channel and a later adoption by another replica never probe again. A probe after that
 * could be made to fail by the sandbox itself (its pids or memory used up, its processes stopped),
 * and must not downgrade its channel to the dumpable copy (attack on helper v4, 2026-12-02).
 */
import { SandboxError } from "../../errors.js";
import { HELPER_PATH, SEALED_HELPER_PATH } from "../channel/protocol/helper-path.js";
import { fromKubeError, type KubernetesCluster } from "./cluster.js";
import { PodExecTimeoutError, podExec } from "./pod-exec.js";
import { CHANNEL_COMMAND, channelStartError, type HelperLog, SEALED_CHANNEL_COMMAND } from "./transport.js";

/**
 * The exec stream to a Pod opened, but the warden-helper it started never answered: the image
 * lacks the helper, or (on a re-open) a process in the sandbox holds it, e.g. by stopping every
 * process it can with SIGSTOP. `why` is the handshake's failure.
 */
export class HelperSilentError extends SandboxError {
  constructor(namespace: string, pod: string, why: string, cause: unknown) {
    super(
      `warden-helper in Pod ${namespace}/${pod} did not answer (${why}); the image must carry warden-helper at /usr/local/bin/warden-helper (warden images build).`,
      { cause },
    );
  }
}

/** Pod annotation naming the helper copy its channel runs: "sealed" or "readable". */
const LABEL_HELPER = "io.warden.helper";

/** The helper copy of a Pod's channel. */
type HelperCopy = "sealed" | "readable";

/** How long the execute-only copy's `--version` may take before the helper counts as silent, ms. */
const PROBE_TIMEOUT_MS = 10_000;

const decided = new WeakMap<KubernetesCluster, Map<string, HelperCopy>>();

/**
 * The channel command of Pod `name`: SEALED_CHANNEL_COMMAND or CHANNEL_COMMAND, from this process's
 * earlier choice, else the Pod's LABEL_HELPER annotation (skipped when `fresh`: a Pod just created
 * has none), else a probe whose outcome is written to that annotation (a JSON merge patch) before
 * the channel starts. Only an exit status other than 0 (gVisor's refusal to load the file, or an
 * image without the copy) chooses the readable copy, with a line to `log` saying why. Rejects
 * HelperSilentError when the probe does not end within PROBE_TIMEOUT_MS, channelStartError's
 * SandboxError when it ends without a status (the API refused the exec: pods/exec rights; or its
 * stream failed), and the API's error when the Pod cannot be read or annotated (`patch` on pods).
 */
export async function channelCommand(
  cluster: KubernetesCluster,
  name: string,
  options: { fresh?: boolean; log?: HelperLog } = {},
): Promise<string[]> {
  const byPod = decided.get(cluster) ?? new Map<string, HelperCopy>();
  decided.set(cluster, byPod);
  let copy = byPod.get(name) ?? (options.fresh ? undefined : await annotatedCopy(cluster, name));
  if (!copy) {
    copy = await probeCopy(cluster, name, options.log);
    await annotateCopy(cluster, name, copy);
  }
  byPod.set(name, copy);
  return copy === "sealed" ? SEALED_CHANNEL_COMMAND : CHANNEL_COMMAND;
}

/** Drops this process's choice for Pod `name` (it was deleted; a new Pod may reuse the name). */
export function forgetHelperCopy(cluster: KubernetesCluster, name: string): void {
  decided.get(cluster)?.delete(name);
}

async function annotatedCopy(cluster: KubernetesCluster, name: string): Promise<HelperCopy | undefined> {
  const { core, namespace } = cluster;
  try {
    const value = (await core.readNamespacedPod({ name, namespace })).metadata?.annotations?.[LABEL_HELPER];
    return value === "sealed" || value === "readable" ? value : undefined;
  } catch (err) {
    throw fromKubeError(err, `reading Pod ${namespace}/${name}`);
  }
}

async function annotateCopy(cluster: KubernetesCluster, name: string, copy: HelperCopy): Promise<void> {
  const { core, namespace } = cluster;
  const body = { metadata: { annotations: { [LABEL_HELPER]: copy } } };
  try {
    await core.patchNamespacedPod({ name, namespace, body }, cluster.mergePatch);
  } catch (err) {
    throw fromKubeError(err, `annotating Pod ${namespace}/${name} with its helper copy`);
  }
}

async function probeCopy(cluster: KubernetesCluster, name: string, log?: HelperLog): Promise<HelperCopy> {
  const probe = await podExec(cluster, name, [SEALED_HELPER_PATH, "--version"], {
    timeoutMs: PROBE_TIMEOUT_MS,
  }).catch((err: Error) => {
    // A sandbox that stops every process (kill -STOP -1) holds it: as a helper that never answers.
    if (err instanceof PodExecTimeoutError)
      throw new HelperSilentError(cluster.namespace, name, err.message, err);
    // The API refused or failed the exec (no exit status): nothing says the copy cannot run here,
    // and the choice is kept for the Pod's life, so it is not made on a refusal or a hiccup.
    throw channelStartError(cluster.namespace, name, err);
  });
  if (probe.exitCode === 0) return "sealed";
  const why = probe.stderr.trim().slice(0, 300);
  log?.(
    `the execute-only helper ${SEALED_HELPER_PATH} does not run in Pod ${cluster.namespace}/${name} (exit ${probe.exitCode}${why ? `: ${why}` : ""}); the channel runs ${HELPER_PATH}, dumpable until its first prctl (rebuild the image with warden images build; under gVisor this is expected)`,
  );
  return "readable";
}
