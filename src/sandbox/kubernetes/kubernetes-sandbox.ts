/**
 * `KubernetesSandbox`: the Sandbox interface on one hardened Pod (pod-spec.ts). Every command and
 * file operation goes over warden-helper's channel (../channel/protocol, the same SandboxIO as a
 * Docker sandbox's channel path), carried by a pods/exec stream (transport.ts). The
 * workspace export is a command over the same channel (tar); the change list is IOSandbox's.
 * `destroy` deletes the Pod with grace 0 and waits until the API no longer has it; it is
 * idempotent, and `await using` calls it.
 */
import { PassThrough, type Readable } from "node:stream";
import { SandboxError } from "../../errors.js";
import { throwIfAborted } from "../../util/index.js";
import type { ChannelClient } from "../channel/protocol/client.js";
import { channelExec } from "../channel/protocol/exec.js";
import { channelIO } from "../channel/protocol/io.js";
import { IOSandbox } from "../io-sandbox.js";
import type { SandboxInfo } from "../types.js";
import { WORKSPACE_DIR } from "../types.js";
import type { WorkspaceHashes } from "../workspace-copy.js";
import { apiStatus, fromKubeError, type KubernetesCluster } from "./cluster.js";

type Opts = { signal?: AbortSignal };

/** A sandbox backed by one Pod. Made by createKubernetesSandbox (create.ts) or adoption. */
export class KubernetesSandbox extends IOSandbox {
  private destroyed: Promise<void> | undefined;

  /** Wraps a running Pod (`info.containerId` is its name) whose helper answers on `channel`. */
  constructor(
    readonly info: SandboxInfo,
    private readonly cluster: KubernetesCluster,
    private readonly channel: ChannelClient,
    baseline: WorkspaceHashes,
  ) {
    super(channelIO(channel), baseline);
  }

  /**
   * The workspace as a tar stream with entries relative to /workspace ("./a.txt"), as Docker's
   * archive API gives it: `tar -cf - .` run in the Pod over the channel. A failing tar ends the
   * stream with a SandboxError.
   */
  async exportWorkspace(options?: Opts): Promise<Readable> {
    throwIfAborted(options?.signal);
    const out = new PassThrough();
    const stderr: Buffer[] = [];
    channelExec(
      this.channel,
      { argv: ["tar", "-C", WORKSPACE_DIR, "-cf", "-", "."] },
      {
        ...(options?.signal ? { signal: options.signal } : {}),
        onStdout: (chunk) => out.write(chunk),
        onStderr: (chunk) => stderr.push(chunk),
      },
    ).then(
      (res) => {
        if (res.exitCode === 0) out.end();
        else
          out.destroy(
            new SandboxError(
              `exporting ${WORKSPACE_DIR} failed (tar exit ${res.exitCode}): ${Buffer.concat(stderr).toString("utf8").trim()}`,
            ),
          );
      },
      (err: Error) => out.destroy(err),
    );
    return out;
  }

  destroy(): Promise<void> {
    this.io.close();
    this.destroyed ??= deletePod(this.cluster, this.info.containerId);
    return this.destroyed;
  }
}

/** How long deletePod waits for a deleted Pod to be gone (ms). */
const DELETE_WAIT_MS = 60_000;

/**
 * Deletes Pod `name` with grace 0 and waits until the API no longer returns it (at most 60 s,
 * polling every 200 ms). A Pod already gone is success. Rejects SandboxError when the delete is
 * refused or the Pod is still there after the wait.
 */
export async function deletePod(cluster: KubernetesCluster, name: string): Promise<void> {
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
