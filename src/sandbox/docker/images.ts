/**
 * `warden images build`: makes the Dockerfile's base image available (scripts/bootstrap-base-image.sh
 * builds it with debootstrap when no registry answers), fetches the npm registry packages the
 * context pins (image-packages.ts: Node and npm for images/sandbox) on the host, then builds images/sandbox (and
 * images/gateway, the egress gateway) with
 * `POST /build` (dockerode buildImage), streaming the build's progress lines.
 */

import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type Docker from "dockerode";
import { execa } from "execa";
import { GATEWAY_IMAGE } from "../../egress/index.js";
import { fromDockerError, SandboxError } from "../../errors.js";
import { DEFAULT_IMAGE } from "../options.js";
import { packDirectory } from "../workspace-copy.js";
import { getDocker, imageExists, pingEngine } from "./engine.js";
import { fetchImagePackages } from "./image-packages.js";

/** The repository root (three levels above this file in both src/ and dist/). */
const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
/** Build context of the default sandbox image. */
const SANDBOX_IMAGE_DIR = join(ROOT, "images", "sandbox");

/** Build context of the egress gateway image (src/egress/, docs/network.md). */
const GATEWAY_IMAGE_DIR = join(ROOT, "images", "gateway");

/** Options of buildSandboxImage. */
export interface BuildImageOptions {
  /** Build without Docker's layer cache. */
  noCache?: boolean;
  /** Tag; default DEFAULT_IMAGE. */
  tag?: string;
  /** Build context holding the Dockerfile; default images/sandbox. */
  contextDir?: string;
  /** Receives each progress line (build output, bootstrap messages). */
  onProgress?: (line: string) => void;
}

/** The image named by the first FROM of a Dockerfile. */
export async function baseImageOf(dockerfile: string): Promise<string> {
  const text = await readFile(dockerfile, "utf8");
  const match = /^\s*FROM\s+(\S+)/im.exec(text);
  if (!match?.[1]) throw new SandboxError(`${dockerfile} has no FROM line.`);
  return match[1];
}

/**
 * Builds the sandbox image. Rejects EngineUnreachableError, SandboxError (bootstrap, package fetch
 * (fetchImagePackages) or build failure, with the engine's message).
 */
export async function buildSandboxImage(
  options: BuildImageOptions = {},
  docker: Docker = getDocker(),
): Promise<string> {
  const say = options.onProgress ?? (() => {});
  const tag = options.tag ?? DEFAULT_IMAGE;
  await pingEngine(docker);
  const contextDir = options.contextDir ?? SANDBOX_IMAGE_DIR;
  const base = await baseImageOf(join(contextDir, "Dockerfile"));
  if (!(await imageExists(docker, base))) {
    say(`base image ${base} is missing: running scripts/bootstrap-base-image.sh`);
    const script = join(ROOT, "scripts", "bootstrap-base-image.sh");
    const result = await execa("bash", [script, base], { reject: false, all: true });
    for (const line of (result.all ?? "").split("\n")) if (line) say(line);
    if (result.exitCode !== 0)
      throw new SandboxError(`bootstrapping base image ${base} failed (exit ${result.exitCode}).`);
  }
  await fetchImagePackages(contextDir, { onProgress: say });
  const context = packDirectory(contextDir, { uid: 0, gid: 0 });
  try {
    const stream = await docker.buildImage(context.stream, {
      t: tag,
      nocache: options.noCache === true,
      forcerm: true,
    });
    let buildError: string | undefined;
    await new Promise<void>((resolve, reject) => {
      docker.modem.followProgress(
        stream,
        (err: Error | null) => (err ? reject(err) : resolve()),
        (event: { stream?: string; status?: string; error?: string }) => {
          if (event.error) {
            buildError ??= event.error;
            say(`error: ${event.error}`);
            return;
          }
          const text = event.stream ?? event.status;
          if (text) for (const line of text.split("\n")) if (line.trim()) say(line.trimEnd());
        },
      );
    });
    await context.done;
    if (buildError) throw new SandboxError(`building image ${tag} failed: ${buildError}`);
  } catch (err) {
    throw fromDockerError(err, { what: `building image ${tag}` });
  }
  if (!(await imageExists(docker, tag)))
    throw new SandboxError(`building image ${tag} produced no image; see the output above.`);
  return tag;
}

/**
 * Builds the egress gateway image (warden-gateway, Go, built in the image) from images/gateway, tagged
 * GATEWAY_IMAGE, the same way as the sandbox image. Rejects like buildSandboxImage.
 */
export function buildGatewayImage(
  options: Omit<BuildImageOptions, "contextDir" | "tag"> = {},
  docker: Docker = getDocker(),
): Promise<string> {
  return buildSandboxImage({ ...options, contextDir: GATEWAY_IMAGE_DIR, tag: GATEWAY_IMAGE }, docker);
}

/** Warden images present locally (label io.warden.image), as `repo:tag` plus size in bytes. */
export async function listSandboxImages(
  docker: Docker = getDocker(),
): Promise<{ tag: string; id: string; sizeBytes: number; created: Date }[]> {
  try {
    const images = await docker.listImages({ filters: { label: ["io.warden.image"] } });
    return images.flatMap((i) =>
      (i.RepoTags ?? ["<none>"]).map((tag) => ({
        tag,
        id: i.Id,
        sizeBytes: i.Size,
        created: new Date(i.Created * 1000),
      })),
    );
  } catch (err) {
    throw fromDockerError(err, { what: "listing images" });
  }
}
