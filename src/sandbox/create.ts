/**
 * `createSandbox`: validates options, checks the engine and image, creates the copy-mode volume
 * and the hardened container and starts it (prepare.ts: with warden-helper and its channel, or
 * docker exec), then copies the workspace in (`finishSandbox`, also the warm pool's hand-over).
 * Any failure or abort on the way removes whatever was created, so nothing is left running.
 */
import { randomUUID } from "node:crypto";
import type Docker from "dockerode";
import { fromDockerError } from "../errors.js";
import { isAbortError, throwIfAborted } from "../util/abort.js";
import { DockerSandbox, removeSandboxResources } from "./docker-sandbox.js";
import { getDocker, pingEngine, requireImage } from "./engine.js";
import { type ResolvedSandboxOptions, resolveSandboxOptions } from "./options.js";
import { type PreparedSandbox, prepareSandbox, resolveExecPath } from "./prepare.js";
import type { Sandbox, SandboxInfo, SandboxOptions } from "./types.js";
import { WORKSPACE_DIR } from "./types.js";
import { packDirectory, type WorkspaceHashes } from "./workspace-copy.js";

/**
 * Creates and starts a hardened sandbox. Rejects: InvalidArgumentError / NotFoundError for bad
 * options (naming the field), EngineUnreachableError, ImageMissingError (naming
 * `warden images build`), SandboxError for other engine failures, AbortError when `signal` fires.
 */
export async function createSandbox(
  options: SandboxOptions = {},
  docker: Docker = getDocker(),
): Promise<Sandbox> {
  const signal = options.signal;
  const opts = await resolveSandboxOptions(options, options.sessionId ?? randomUUID());
  const execPath = resolveExecPath(options.execPath);
  throwIfAborted(signal);
  await pingEngine(docker, signal);
  await requireImage(docker, opts.image);
  throwIfAborted(signal);
  const prepared = await prepareSandbox(docker, opts, execPath, { signal });
  return finishSandbox(docker, prepared, opts, signal);
}

/**
 * The second half of creating a sandbox: copies the workspace in (copy mode), records the
 * baseline and wraps the prepared container as a DockerSandbox for the session `opts` names
 * (its sessionId and tenant; for a pooled container these can differ from its labels).
 * Removes the container and volume when it fails. Rejects like createSandbox.
 */
export async function finishSandbox(
  docker: Docker,
  prepared: PreparedSandbox,
  opts: ResolvedSandboxOptions,
  signal?: AbortSignal,
): Promise<DockerSandbox> {
  const { container } = prepared;
  try {
    throwIfAborted(signal);
    const baseline = await setUpWorkspace(container, opts.workspaceMode, opts.workspaceHostPath);
    throwIfAborted(signal);
    const info: SandboxInfo = {
      containerId: container.id,
      sessionId: opts.sessionId,
      tenant: opts.tenant,
      image: opts.image,
      runtime: opts.runtime,
      workspaceMode: opts.workspaceMode,
      roots: [WORKSPACE_DIR, ...opts.mounts.map((m) => m.containerPath)],
      createdAt: prepared.createdAt,
      expiresAt: prepared.expiresAt,
      execPath: prepared.execPath,
    };
    return new DockerSandbox(info, docker, container, prepared.volumeName, baseline, prepared.channel);
  } catch (err) {
    prepared.channel?.close();
    await removeSandboxResources(docker, container.id, prepared.volumeName).catch(() => {});
    if (isAbortError(err)) throw err;
    throw fromDockerError(err, { what: "creating the sandbox", containerId: container.id });
  }
}

/** Copies the host directory in (copy mode) and returns the baseline hashes for changedPaths. */
async function setUpWorkspace(
  container: Docker.Container,
  mode: SandboxInfo["workspaceMode"],
  hostPath: string | undefined,
): Promise<WorkspaceHashes> {
  if (!hostPath) return new Map();
  const packed = packDirectory(hostPath);
  if (mode === "copy") {
    await Promise.all([container.putArchive(packed.stream, { path: WORKSPACE_DIR }), packed.done]);
  } else {
    // ro/rw: nothing to copy, but the baseline is the host directory as it is now.
    packed.stream.resume();
    await packed.done;
  }
  return packed.hashes;
}
