/**
 * warden-helper for images warden did not build: the binary is taken once per process from the
 * warden sandbox image (Docker Engine API `GET /containers/{id}/archive` of a created, never
 * started container) and put into each new container through `PUT /containers/{id}/archive`
 * before start. The root filesystem is read-only, and Docker refuses archive writes to it, so the
 * binary goes into an anonymous volume at FOREIGN_HELPER_DIR (removed with the container; root
 * owned, so the sandbox user cannot change it). The binary is static: it runs on any Linux image.
 */
import type Docker from "dockerode";
import { fromDockerError, SandboxError } from "../../../errors.js";
import { sandboxLabels } from "../../labels.js";
import { DEFAULT_IMAGE } from "../../options.js";
import { HELPER_PATH, withHelperMain } from "./container.js";

/** Image label naming the helper's path inside images that carry it (images/sandbox/Dockerfile). */
const HELPER_LABEL = "io.warden.helper";

/** Image label naming the helper's execute-only copy (root, mode 0111), in images that carry one. */
const SEALED_HELPER_LABEL = "io.warden.helper-sealed";

/** Directory (an anonymous volume) the helper is copied into for other images. */
const FOREIGN_HELPER_DIR = "/opt/warden-helper";

/** The helper's path in containers of other images. */
export const FOREIGN_HELPER_PATH = `${FOREIGN_HELPER_DIR}/warden-helper`;

const archives = new Map<string, Promise<Buffer>>();

/**
 * Where the helper lives in `image`: its `io.warden.helper` label, or null when the image does
 * not carry one (it must then be installed with installHelper). With `sealed` (runc), the
 * execute-only copy of `io.warden.helper-sealed` when the image has one and its helper is still
 * warden's own (HELPER_PATH; a derived image's helper label wins): Linux makes a process
 * that execs a file it cannot read non-dumpable at execve, so no process of the sandbox's uid
 * (for a `rw` workspace, uid 1000, perhaps a host user's) can ptrace the helper before its own
 * prctl (gVisor runs no file it cannot read: keep the readable copy there). Rejects with the
 * engine's error.
 */
export async function helperPathInImage(
  docker: Docker,
  image: string,
  options: { sealed?: boolean } = {},
): Promise<string | null> {
  try {
    const labels = (await docker.getImage(image).inspect()).Config?.Labels ?? {};
    const path = labels[HELPER_LABEL];
    const sealed = labels[SEALED_HELPER_LABEL];
    // Labels are inherited (FROM): an image that names a helper of its own keeps it.
    if (options.sealed && path === HELPER_PATH && typeof sealed === "string" && sealed.startsWith("/"))
      return sealed;
    return typeof path === "string" && path.startsWith("/") ? path : null;
  } catch (err) {
    throw fromDockerError(err, { what: `inspecting image ${image}` });
  }
}

/**
 * The helper as a one-file tar archive (entry `warden-helper`), read from `sourceImage` once per
 * process. Rejects SandboxError naming `warden images build` when the source image lacks it.
 */
export function helperArchive(docker: Docker, sourceImage: string = DEFAULT_IMAGE): Promise<Buffer> {
  let cached = archives.get(sourceImage);
  if (!cached) {
    cached = readHelperArchive(docker, sourceImage);
    archives.set(sourceImage, cached);
    cached.catch(() => archives.delete(sourceImage));
  }
  return cached;
}

async function readHelperArchive(docker: Docker, sourceImage: string): Promise<Buffer> {
  const now = new Date();
  const labels = sandboxLabels({
    sessionId: "helper-source",
    tenant: "warden-internal",
    createdAt: now,
    expiresAt: new Date(now.getTime() + 10 * 60_000),
  });
  let container: Docker.Container | undefined;
  try {
    container = await docker.createContainer({
      Image: sourceImage,
      Entrypoint: [HELPER_PATH],
      Cmd: [],
      Labels: labels,
      NetworkDisabled: true,
    });
    const stream = (await container.getArchive({ path: HELPER_PATH })) as NodeJS.ReadableStream;
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
    return Buffer.concat(chunks);
  } catch (err) {
    throw new SandboxError(
      `Could not read warden-helper from image ${sourceImage} (${(err as Error).message}); rebuild it with 'warden images build'.`,
      { cause: err },
    );
  } finally {
    await container?.remove({ force: true, v: true }).catch(() => {});
  }
}

/**
 * A hardened create body for an image without the helper: the helper as main process from an
 * anonymous volume at FOREIGN_HELPER_DIR. Install the binary with installHelper before start.
 */
export function withForeignHelper(config: Docker.ContainerCreateOptions): Docker.ContainerCreateOptions {
  const withMain = withHelperMain(config, FOREIGN_HELPER_PATH);
  return { ...withMain, Volumes: { ...config.Volumes, [FOREIGN_HELPER_DIR]: {} } };
}

/** Copies the helper archive into a created (not yet started) container made with withForeignHelper. */
export async function installHelper(container: Docker.Container, archive: Buffer): Promise<void> {
  try {
    await container.putArchive(archive, { path: FOREIGN_HELPER_DIR });
  } catch (err) {
    throw fromDockerError(err, {
      what: "copying warden-helper into the container",
      containerId: container.id,
    });
  }
}
