/**
 * `DockerSandbox`: the Sandbox interface on one hardened Docker container (see hardening.ts),
 * created by `createSandbox` (create.ts). Commands and file operations go through one SandboxIO
 * (io.ts), chosen once when the sandbox is made: warden-helper's exec channel when the container
 * runs it (channel/), else docker exec (exec/); both paths pass the same suites. Every
 * method maps engine failures through fromDockerError; once the container is stopped or gone they
 * reject SandboxNotRunningError. Lifecycle follows testcontainers-node: idempotent removal
 * (404/409 are success) and `await using` (Symbol.asyncDispose).
 */
import type { Readable } from "node:stream";
import type Docker from "dockerode";
import { fromDockerError } from "../../errors.js";
import { throwIfAborted } from "../../util/index.js";
import { AbstractSandbox } from "../abstract-sandbox.js";
import { type ChannelClient, channelIO } from "../channel/index.js";
import { requireNonRootUid, uidRegistry } from "../sandbox-uid.js";
import type { SandboxInfo } from "../types.js";
import { WORKSPACE_DIR } from "../types.js";
import type { WorkspaceHashes } from "../workspace-copy.js";
import { removeSocketDir, socketDirOf, takeRememberedSocketDir } from "./channel/index.js";
import { dockerExecIO } from "./exec/index.js";

type Opts = { signal?: AbortSignal };

/** A sandbox backed by one Docker container (and, in copy mode, one tmpfs volume). */
export class DockerSandbox extends AbstractSandbox {
  private destroyed: Promise<void> | undefined;

  /**
   * Use `createSandbox`; this wraps an already started container. With `channel` (warden-helper's
   * exec channel) every command and file operation goes over it, for the sandbox's whole life (a
   * channel that drops makes calls reject SandboxNotRunningError); without, through docker exec.
   * `info.uid` (the container's user, never 0) stays held in this process's uid registry until the
   * container is removed. Throws InvalidArgumentError when it is missing or 0.
   */
  constructor(
    readonly info: SandboxInfo,
    private readonly docker: Docker,
    private readonly container: Docker.Container,
    private readonly volumeName: string | undefined,
    baseline: WorkspaceHashes,
    channel?: ChannelClient,
  ) {
    const uid = requireNonRootUid(info.uid ?? 0);
    super(
      channel
        ? channelIO(channel)
        : dockerExecIO(container, uid, { requireSeccomp: info.workspaceMode === "rw" }),
      baseline,
    );
    uidRegistry.bind(container.id, uid);
  }

  /** `GET /containers/{id}/archive?path=/workspace/.`: entries relative to /workspace ("./a.txt"). */
  async exportWorkspace(options?: Opts): Promise<Readable> {
    throwIfAborted(options?.signal);
    try {
      return (await this.container.getArchive({ path: `${WORKSPACE_DIR}/.` })) as Readable;
    } catch (err) {
      throw fromDockerError(err, { what: "exporting the workspace", containerId: this.container.id });
    }
  }

  destroy(): Promise<void> {
    this.io.close();
    this.destroyed ??= removeSandboxResources(this.docker, this.container.id, this.volumeName);
    return this.destroyed;
  }
}

/**
 * Force-removes a container (with its anonymous volumes and its channel socket directory,
 * socket-dir.ts) and then the named workspace volume.
 * 404 (already gone) and 409 (removal in progress) count as success; a volume still in use is
 * retried for up to ~5 s while the container's removal finishes.
 */
export async function removeSandboxResources(
  docker: Docker,
  containerId: string | undefined,
  volumeName?: string,
): Promise<void> {
  if (containerId) {
    // This process's own sandboxes need no inspect; gc's and others' are read from their mounts.
    const socketDir =
      takeRememberedSocketDir(containerId) ??
      (await docker
        .getContainer(containerId)
        .inspect()
        .then(socketDirOf, () => undefined));
    try {
      await docker.getContainer(containerId).remove({ force: true, v: true });
    } catch (err) {
      const status = (err as { statusCode?: number }).statusCode;
      if (status !== 404 && status !== 409)
        throw fromDockerError(err, { what: "removing the sandbox container", containerId });
    }
    uidRegistry.releaseOwner(containerId);
    if (socketDir) await removeSocketDir(socketDir);
  }
  if (!volumeName) return;
  for (let attempt = 0; ; attempt++) {
    try {
      await docker.getVolume(volumeName).remove();
      return;
    } catch (err) {
      const status = (err as { statusCode?: number }).statusCode;
      if (status === 404) return;
      if (status !== 409 || attempt >= 50)
        throw fromDockerError(err, { what: `removing volume ${volumeName}` });
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/**
 * Removes volume `name` unless a container still uses it (Docker's 409): resolves false then,
 * true when it is removed or already gone. Other engine errors reject raw (callers map them).
 */
export async function removeVolumeIfUnused(docker: Docker, name: string): Promise<boolean> {
  try {
    await docker.getVolume(name).remove();
  } catch (err) {
    const status = (err as { statusCode?: number }).statusCode;
    if (status === 409) return false;
    if (status !== 404) throw err;
  }
  return true;
}
