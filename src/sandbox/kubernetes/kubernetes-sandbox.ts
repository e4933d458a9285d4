/**
 * `KubernetesSandbox`: the Sandbox interface on one hardened Pod (pod-spec.ts). Every command and
 * file operation goes over warden-helper's channel (../channel/protocol, the same SandboxIO as a
 * Docker sandbox's channel path), carried by a pods/exec stream (transport.ts) that a heartbeat
 * keeps busy and that is re-opened when it ends under a live session (pod-channel.ts). The
 * workspace export is a command over the same channel (tar); the change list is AbstractSandbox's.
 * `destroy` deletes the Pod with grace 0 and waits until the API no longer has it (delete-pod.ts); it is
 * idempotent, and `await using` calls it.
 */
import { PassThrough, type Readable } from "node:stream";
import { SandboxError } from "../../errors.js";
import { throwIfAborted } from "../../util/index.js";
import { AbstractSandbox } from "../abstract-sandbox.js";
import type { ChannelClient } from "../channel/protocol/client.js";
import { channelExec } from "../channel/protocol/exec.js";
import { uidRegistry } from "../sandbox-uid.js";
import type { SandboxInfo } from "../types.js";
import { WORKSPACE_DIR } from "../types.js";
import type { WorkspaceHashes } from "../workspace-copy.js";
import type { KubernetesCluster } from "./cluster.js";
import { deletePod, podUidOwner } from "./delete-pod.js";
import { PodChannel } from "./pod-channel.js";

type Opts = { signal?: AbortSignal };

/** A sandbox backed by one Pod. Made by createKubernetesSandbox (create.ts) or adoption. */
export class KubernetesSandbox extends AbstractSandbox {
  private destroyed: Promise<void> | undefined;
  private readonly channel: PodChannel;

  /**
   * Wraps a running Pod (`info.containerId` is its name) whose helper answers on `channel`; later
   * channels replace it when its stream ends (pod-channel.ts; `log` gets those lines). The Pod's
   * uid (`info.uid`) stays held in this process's uid registry until destroy deletes the Pod.
   */
  constructor(
    readonly info: SandboxInfo,
    private readonly cluster: KubernetesCluster,
    channel: ChannelClient,
    baseline: WorkspaceHashes,
    log?: (line: string) => void,
  ) {
    const podChannel = new PodChannel(cluster, info.containerId, channel, {
      sessionId: info.sessionId,
      ...(log ? { log } : {}),
    });
    super(podChannel.io(), baseline);
    this.channel = podChannel;
    if (info.uid !== undefined) uidRegistry.bind(podUidOwner(cluster.namespace, info.containerId), info.uid);
  }

  /** How many times the Pod's exec channel was re-opened after its stream ended. */
  get reconnects(): number {
    return this.channel.reconnects;
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
    this.channel
      .with(options?.signal, (client) =>
        channelExec(
          client,
          { argv: ["tar", "-C", WORKSPACE_DIR, "-cf", "-", "."] },
          {
            ...(options?.signal ? { signal: options.signal } : {}),
            onStdout: (chunk) => out.write(chunk),
            onStderr: (chunk) => stderr.push(chunk),
          },
        ),
      )
      .then(
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
