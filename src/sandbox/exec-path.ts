/**
 * Which exec path a sandbox's calls take, on any backend: the helper's channel (default) or, on
 * Docker only, one docker exec per call. Engine-free, so the warm pool's key can name it.
 */
import { InvalidArgumentError } from "../errors.js";

/** Which exec path a sandbox uses: the channel when possible (default), or always docker exec. */
export type ExecPath = "channel" | "docker-exec";

/** The exec path asked for by WARDEN_EXEC_PATH ("channel" or "docker-exec"); undefined when unset. */
function execPathFromEnv(env: NodeJS.ProcessEnv = process.env): ExecPath | undefined {
  const v = env.WARDEN_EXEC_PATH;
  return v === "channel" || v === "docker-exec" ? v : undefined;
}

/**
 * The exec path asked for: `options.execPath`, else $WARDEN_EXEC_PATH, else "channel".
 * Throws InvalidArgumentError for any other value.
 */
export function resolveExecPath(requested: unknown): ExecPath {
  const path = requested ?? execPathFromEnv() ?? "channel";
  if (path !== "channel" && path !== "docker-exec") {
    throw new InvalidArgumentError(
      `execPath must be "channel" or "docker-exec", got ${JSON.stringify(path)}.`,
    );
  }
  return path;
}
