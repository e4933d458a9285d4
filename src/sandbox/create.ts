/**
 * `createSandbox`: validates options, checks the engine and image, creates the copy-mode volume
 * and the hardened container, starts it and copies the workspace in. Any failure or abort on the
 * way removes whatever was created, so nothing is left running.
 */
import { randomBytes, randomUUID } from "node:crypto";
import type Docker from "dockerode";
import { fromDockerError } from "../errors.js";
import { isAbortError, throwIfAborted } from "../util/abort.js";
import { DockerSandbox, removeSandboxResources } from "./docker-sandbox.js";
import { getDocker, pingEngine, requireImage } from "./engine.js";
import { hardenedContainerConfig, workspaceVolumeConfig } from "./hardening.js";
import { LABEL, sandboxLabels } from "./labels.js";
import { resolveSandboxOptions } from "./options.js";
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
  throwIfAborted(signal);
  await pingEngine(docker, signal);
  await requireImage(docker, opts.image);
  throwIfAborted(signal);

  const createdAt = new Date(Math.floor(Date.now() / 1000) * 1000);
  const expiresAt = new Date(createdAt.getTime() + opts.ttlMs);
  const labels = sandboxLabels({ sessionId: opts.sessionId, tenant: opts.tenant, createdAt, expiresAt });
  const volumeName =
    opts.workspaceMode === "copy"
      ? `warden-ws-${opts.sessionId.slice(0, 40)}-${randomBytes(4).toString("hex")}`
      : undefined;
  let containerId: string | undefined;
  let volumeCreated = false;
  try {
    if (volumeName) {
      await docker.createVolume(workspaceVolumeConfig(volumeName, opts.limits.workspaceBytes, labels));
      volumeCreated = true;
    }
    throwIfAborted(signal);
    const config = hardenedContainerConfig({
      image: opts.image,
      limits: opts.limits,
      runtime: opts.runtime,
      labels: volumeName ? { ...labels, [LABEL.volume]: volumeName } : labels,
      workspaceMode: opts.workspaceMode,
      workspaceHostPath: opts.workspaceHostPath,
      workspaceVolume: volumeName,
      mounts: opts.mounts,
    });
    const container = await docker.createContainer(config);
    containerId = container.id;
    throwIfAborted(signal);
    await container.start();
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
      createdAt,
      expiresAt,
    };
    return new DockerSandbox(info, docker, container, volumeName, baseline);
  } catch (err) {
    await removeSandboxResources(docker, containerId, volumeCreated ? volumeName : undefined).catch(() => {});
    if (isAbortError(err)) throw err;
    throw fromDockerError(err, { what: "creating the sandbox", containerId });
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
