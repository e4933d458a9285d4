/**
 * warden's error classes. Every error carries a stable `code` (never parse the message) and a
 * message that names what was wrong and how to fix it.
 */

/** Stable error codes; each maps to one subclass below. HTTP statuses are used by `warden serve`. */
export type WardenErrorCode =
  | "ENGINE_UNREACHABLE"
  | "IMAGE_MISSING"
  | "INVALID_ARGUMENT"
  | "NOT_FOUND"
  | "SANDBOX_NOT_RUNNING"
  | "SANDBOX_ERROR"
  | "NO_ROOM"
  | "PATH_OUTSIDE_WORKSPACE"
  | "TIMEOUT"
  | "ABORTED"
  | "POLICY_INVALID"
  | "CONFLICT"
  | "RATE_LIMITED"
  | "UNAUTHORIZED"
  | "COMMAND_FAILED"
  | "PROVIDER_ERROR"
  | "PACKAGE_MISSING";

/** HTTP status for each code, for the server's JSON errors. */
export const HTTP_STATUS: Record<WardenErrorCode, number> = {
  ENGINE_UNREACHABLE: 503,
  IMAGE_MISSING: 500,
  INVALID_ARGUMENT: 400,
  NOT_FOUND: 404,
  SANDBOX_NOT_RUNNING: 409,
  SANDBOX_ERROR: 500,
  NO_ROOM: 503,
  PATH_OUTSIDE_WORKSPACE: 403,
  TIMEOUT: 504,
  ABORTED: 499,
  POLICY_INVALID: 400,
  CONFLICT: 409,
  RATE_LIMITED: 429,
  UNAUTHORIZED: 401,
  COMMAND_FAILED: 422,
  PROVIDER_ERROR: 502,
  PACKAGE_MISSING: 500,
};

/** Base class: `code` is stable, `message` is for people. */
export class WardenError extends Error {
  readonly code: WardenErrorCode;
  constructor(code: WardenErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** No Docker engine answered. The message says how to start one. */
export class EngineUnreachableError extends WardenError {
  constructor(detail: string, options?: { cause?: unknown }) {
    super(
      "ENGINE_UNREACHABLE",
      `Docker engine unreachable (${detail}). Start one with 'npm run engine' (scripts/ensure-docker.sh) ` +
        "or set DOCKER_HOST to a reachable engine.",
      options,
    );
  }
}

/** The sandbox image is not present locally. */
export class ImageMissingError extends WardenError {
  constructor(readonly image: string) {
    super("IMAGE_MISSING", `Sandbox image '${image}' is not present. Build it with 'warden images build'.`);
  }
}

/** A caller passed a bad value (limit, path, option). The message names the field. */
export class InvalidArgumentError extends WardenError {
  constructor(message: string) {
    super("INVALID_ARGUMENT", message);
  }
}

/** A session, container or file that does not exist. */
export class NotFoundError extends WardenError {
  constructor(message: string) {
    super("NOT_FOUND", message);
  }
}

/**
 * The sandbox's container is stopped or gone; the call did not run. The message names the
 * container by its short (12-character) Docker id, unless `options.message` says more (a Kubernetes
 * Pod is named in full with its namespace, why and what to do: sandbox/kubernetes/channel-end.ts).
 */
export class SandboxNotRunningError extends WardenError {
  constructor(containerId: string, options?: { cause?: unknown; message?: string }) {
    super(
      "SANDBOX_NOT_RUNNING",
      options?.message ?? `Sandbox container ${containerId.slice(0, 12)} is not running.`,
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
  }
}

/** Any other engine-side failure. */
export class SandboxError extends WardenError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("SANDBOX_ERROR", message, options);
  }
}

/**
 * The backend has no room for another sandbox now, and may have later: on Kubernetes, no node takes
 * the Pod (the scheduler's reason), or the namespace's ResourceQuota is used up. The message names
 * the cause and what frees room. `warden serve` answers it with HTTP 503 and Retry-After:
 * `retryAfterSeconds` when set (the warm pool sets it from its key's refill back-off,
 * src/pool/warm-pool.ts), else NO_ROOM_RETRY_AFTER_SECONDS.
 */
export class NoRoomError extends WardenError {
  /** Seconds until room is worth asking for again, when the thrower knows (whole seconds, >= 1). */
  retryAfterSeconds?: number;
  constructor(message: string, options?: { cause?: unknown }) {
    super("NO_ROOM", message, options);
  }
}

/** Retry-After of a NoRoomError that carries no retryAfterSeconds, in seconds. */
export const NO_ROOM_RETRY_AFTER_SECONDS = 10;

/**
 * A path whose canonical target (symlinks and `..` resolved inside the sandbox) lies outside the
 * workspace and the session's mounts. Unlike Pi, which does not confine paths
 * (CVE-2025-53109, CVE-2025-53110).
 */
export class PathOutsideWorkspaceError extends WardenError {
  constructor(
    readonly requested: string,
    readonly resolved: string,
  ) {
    super(
      "PATH_OUTSIDE_WORKSPACE",
      `Path '${requested}' resolves to '${resolved}', which is outside the workspace and the session's mounts.`,
    );
  }
}

/** A policy file that failed to parse or validate; message gives file:line:column. */
export class PolicyInvalidError extends WardenError {
  constructor(message: string) {
    super("POLICY_INVALID", message);
  }
}

/**
 * A feature that needs an optional package was used, and the package is not installed (the
 * optional peer dependencies of package.json: the server, the Kubernetes backend, `warden run`,
 * `warden mcp`; src/util/optional-package.ts). The message names the feature, the missing package
 * and the npm command that installs the feature's packages at the versions warden is tested with.
 */
export class PackageMissingError extends WardenError {
  constructor(
    readonly feature: string,
    readonly packageName: string,
    readonly installCommand: string,
    options?: { cause?: unknown },
  ) {
    super(
      "PACKAGE_MISSING",
      `${feature} needs the package '${packageName}', which is not installed (an optional peer dependency of warden). ` +
        `Install it with: ${installCommand}`,
      options,
    );
  }
}

/** Shape of the engine errors docker-modem throws (HTTP status plus JSON body). */
interface DockerModemError {
  statusCode?: number;
  reason?: string;
  json?: { message?: string } | null;
  code?: string;
  message?: string;
}

/**
 * The one table from Docker API failures to warden errors.
 * Source: Docker Engine API 1.41 status codes (404 no such object, 409 conflict / not running,
 * 304 already in that state) and Node's socket errors (ENOENT, ECONNREFUSED) for an absent engine.
 */
export function fromDockerError(err: unknown, context: { what: string; containerId?: string }): WardenError {
  if (err instanceof WardenError) return err;
  const e = (err ?? {}) as DockerModemError;
  const detail = e.json?.message ?? e.reason ?? e.message ?? String(err);
  if (e.code === "ENOENT" || e.code === "ECONNREFUSED" || e.code === "EACCES") {
    return new EngineUnreachableError(`${e.code} while ${context.what}`, { cause: err });
  }
  if (e.statusCode === 409 && /is not running|is paused|restarting/i.test(detail) && context.containerId) {
    return new SandboxNotRunningError(context.containerId, { cause: err });
  }
  if (e.statusCode === 404) return new NotFoundError(`${context.what}: ${detail}`);
  return new SandboxError(`${context.what} failed: ${detail}`, { cause: err });
}
