/**
 * The Docker engine connection: one dockerode client per process (DOCKER_HOST or the default
 * socket, as the docker CLI does), a reachability check and an image-presence check that turn
 * engine failures into warden errors.
 */
import Docker from "dockerode";
import { EngineUnreachableError, fromDockerError, ImageMissingError } from "../../errors.js";
import { throwIfAborted } from "../../util/index.js";

let shared: Docker | undefined;

/** The process-wide dockerode client (created on first use; honours DOCKER_HOST). */
export function getDocker(): Docker {
  shared ??= new Docker();
  return shared;
}

/**
 * Resolves when the engine answers `GET /_ping`.
 * Rejects EngineUnreachableError (message says to run `npm run engine`) otherwise.
 */
export async function pingEngine(docker: Docker = getDocker(), signal?: AbortSignal): Promise<void> {
  try {
    throwIfAborted(signal);
    await docker.ping();
  } catch (err) {
    const mapped = fromDockerError(err, { what: "pinging the Docker engine", engine: engineAddress(docker) });
    if (mapped instanceof EngineUnreachableError) throw mapped;
    const detail = err instanceof Error ? err.message : String(err);
    throw new EngineUnreachableError(detail, { cause: err });
  }
}

/** True when `image` exists locally. Rejects EngineUnreachableError / SandboxError on engine failure. */
export async function imageExists(docker: Docker, image: string): Promise<boolean> {
  try {
    await docker.getImage(image).inspect();
    return true;
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 404) return false;
    throw fromDockerError(err, { what: `inspecting image ${image}` });
  }
}

/**
 * Rejects ImageMissingError when `image` is not present locally: naming `warden images build` for
 * `defaultImage`, else how to get that image or go back to the default.
 */
export async function requireImage(docker: Docker, image: string, defaultImage?: string): Promise<void> {
  if (!(await imageExists(docker, image)))
    throw new ImageMissingError(image, {
      isDefault: defaultImage === undefined || image === defaultImage,
      ...(defaultImage ? { defaultImage } : {}),
    });
}

/**
 * Where `docker` connects, for messages: `unix://<socket>` or `<protocol>://<host>:<port>`
 * (docker-modem's fields, which it fills from DOCKER_HOST or the default socket).
 */
function engineAddress(docker: Docker): string {
  const modem = docker.modem as { socketPath?: unknown; host?: unknown; port?: unknown; protocol?: unknown };
  if (typeof modem.socketPath === "string") return `unix://${modem.socketPath}`;
  if (typeof modem.host === "string")
    return `${String(modem.protocol ?? "http")}://${modem.host}:${String(modem.port ?? "")}`;
  return "the default socket";
}
