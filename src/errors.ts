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
  | "PERMISSION_DENIED"
  | "TIMEOUT"
  | "ABORTED"
  | "POLICY_INVALID"
  | "CONFLICT"
  | "RATE_LIMITED"
  | "UNAUTHORIZED"
  | "COMMAND_FAILED"
  | "PROVIDER_ERROR"
  | "PACKAGE_MISSING"
  | "PAYLOAD_TOO_LARGE";

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
  PERMISSION_DENIED: 403,
  TIMEOUT: 504,
  ABORTED: 499,
  POLICY_INVALID: 400,
  CONFLICT: 409,
  RATE_LIMITED: 429,
  UNAUTHORIZED: 401,
  COMMAND_FAILED: 422,
  PROVIDER_ERROR: 502,
  PACKAGE_MISSING: 500,
  PAYLOAD_TOO_LARGE: 413,
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

/**
 * No Docker engine answered. `detail` says what failed where (`ENOENT at unix:///var/run/docker.sock
 * while pinging the Docker engine`); the message says how to start one, or, for EACCES (the socket
 * is there but this user may not use it), how to get access.
 */
export class EngineUnreachableError extends WardenError {
  constructor(detail: string, options?: { cause?: unknown; denied?: boolean }) {
    const fix = options?.denied
      ? "This user may not use the engine's socket: add it to the 'docker' group (then log in again), or set DOCKER_HOST to an engine it may use."
      : "Start Docker (e.g. 'sudo systemctl start docker', or Docker Desktop), or set DOCKER_HOST to a reachable engine; " +
        "in a warden checkout, 'npm run engine' (scripts/ensure-docker.sh) starts one.";
    super(
      "ENGINE_UNREACHABLE",
      `Docker engine unreachable (${detail}). ${fix}`,
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
  }
}

/**
 * The sandbox image is not present locally. The message names the fix: `warden images build` for
 * the default image (`isDefault`), else pulling or building that image, or leaving the image out.
 */
export class ImageMissingError extends WardenError {
  constructor(
    readonly image: string,
    options?: { isDefault?: boolean; defaultImage?: string },
  ) {
    const fix =
      options?.isDefault !== false
        ? "Build it with 'warden images build'."
        : `Pull it ('docker pull ${image}') or build it; or leave out --image (the image option) to use ${options.defaultImage ?? "warden's default image"}, which 'warden images build' builds.`;
    super("IMAGE_MISSING", `Sandbox image '${image}' is not present. ${fix}`);
  }
}

/**
 * A bad value of one named option: `field` is its path in the options object
 * (`limits.memoryBytes`, `network.egressNetworks[0]`), `problem` the rest of the sentence
 * (`must be at least 6 MiB …`). The message is `${field} ${problem}`; a front end that names the
 * option otherwise (the CLI's `--memory`) words it again from the two (src/cli/flags/flag-errors.ts).
 */
export interface FieldProblem {
  field: string;
  problem: string;
}

function fieldMessage(what: string | FieldProblem): string {
  return typeof what === "string" ? what : `${what.field} ${what.problem}`;
}

/**
 * A caller passed a bad value (limit, path, option). The message names the field; when built from
 * a FieldProblem, `field` and `problem` carry it apart.
 */
export class InvalidArgumentError extends WardenError {
  readonly field?: string;
  readonly problem?: string;
  constructor(message: string | FieldProblem) {
    super("INVALID_ARGUMENT", fieldMessage(message));
    if (typeof message !== "string") {
      this.field = message.field;
      this.problem = message.problem;
    }
  }
}

/**
 * A session, container or file that does not exist. Built from a FieldProblem (a host path option
 * that names nothing), it carries `field` and `problem` as InvalidArgumentError does.
 */
export class NotFoundError extends WardenError {
  readonly field?: string;
  readonly problem?: string;
  constructor(message: string | FieldProblem) {
    super("NOT_FOUND", fieldMessage(message));
    if (typeof message !== "string") {
      this.field = message.field;
      this.problem = message.problem;
    }
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
 * src/sandbox/pool/warm-pool.ts), else NO_ROOM_RETRY_AFTER_SECONDS.
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

/**
 * The sandbox refused the operation on a path to its user (EACCES, EPERM, EROFS): a file without
 * read permission, a read-only directory or mount, a link through `/proc/1/root`. The caller's
 * path is at fault, not the engine: `warden serve` answers 403. The message names the path and
 * the operation, in the sandbox's words.
 */
export class PermissionDeniedError extends WardenError {
  constructor(message: string) {
    super("PERMISSION_DENIED", message);
  }
}

/** A policy file that failed to parse or validate; message gives file:line:column. */
export class PolicyInvalidError extends WardenError {
  constructor(message: string) {
    super("POLICY_INVALID", message);
  }
}

/**
 * What a client sent or asked for is over a size bound of `warden serve` (a file body, a file to
 * read, a workspace archive): HTTP 413. The message names the thing, its size when known, the
 * bound and the setting or the other route that fixes it, as one sentence.
 */
export class PayloadTooLargeError extends WardenError {
  constructor(message: string) {
    super("PAYLOAD_TOO_LARGE", message);
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

/**
 * The engine's words when no address pool is left for a new network (Docker Engine 20.10+:
 * libnetwork's ipam, answered as a 404; older engines: "all predefined address pools have been
 * fully subnetted").
 */
const ADDRESS_POOLS_USED_UP =
  /could not find an available, non-overlapping IPv4 address pool|all predefined address pools have been fully subnetted/i;

/**
 * No room for another network on the engine: every session with network egress takes one network
 * from the engine's default address pools (30 on a default engine), shared with everything else
 * that creates networks there. A capacity condition (NoRoomError: 503 + Retry-After in
 * `warden serve`), never a missing object; the message names the cause and the fixes.
 */
function addressPoolsUsedUp(what: string, detail: string, cause: unknown): NoRoomError {
  return new NoRoomError(
    `${what}: the Docker engine has no address pool left for the session's egress network (${detail}). ` +
      "Each session with network egress takes one network from the engine's default address pools (30 on a default engine). " +
      "Close networked sessions or remove unused networks, raise the engine's pools (default-address-pools in daemon.json), " +
      "or lower warden serve's maxNetworkedSessions below them.",
    { cause },
  );
}

/**
 * The engine's words (Docker Engine 20.10+, libnetwork; an HTTP 500 when the container starts)
 * when a network it connects a container to has no address left: `…: NAME (ID)`.
 */
const NETWORK_ADDRESSES_USED_UP = /no available IPv4 addresses on this network's address pools: (\S+)/i;

/**
 * No address left on an engine network for another container: every session's gateway takes one
 * on its egress network (the engine's default bridge unless network.egressNetworks names another),
 * which `default-address-pools` of /24s make a /24 (253 addresses) too. A capacity condition
 * (NoRoomError), never an internal error; the message names the network, the cause and the fixes.
 */
function networkAddressesUsedUp(what: string, network: string, detail: string, cause: unknown): NoRoomError {
  return new NoRoomError(
    `${what}: the engine network '${network}' has no address left for another container (${detail}). ` +
      "Each session with network egress puts its gateway on its egress network (the engine's default bridge unless --egress-network or network.egressNetworks names another), one address each. " +
      `Close networked sessions or remove other containers from '${network}', name an egress network with a larger subnet, ` +
      "or lower warden serve's maxNetworkedSessions below its free addresses.",
    { cause },
  );
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
 * 304 already in that state) and Node's socket errors (ENOENT, ECONNREFUSED) for an absent engine;
 * the engine's used-up address pools (a 404 in its words) are NoRoomError (503), not NotFoundError,
 * and so is a network with no address left (a 500 in its words), not SandboxError.
 */
export function fromDockerError(
  err: unknown,
  context: { what: string; containerId?: string; engine?: string },
): WardenError {
  if (err instanceof WardenError) return err;
  const e = (err ?? {}) as DockerModemError;
  const detail = e.json?.message ?? e.reason ?? e.message ?? String(err);
  if (e.code === "ENOENT" || e.code === "ECONNREFUSED" || e.code === "EACCES") {
    const at = context.engine ? ` at ${context.engine}` : "";
    return new EngineUnreachableError(`${e.code}${at} while ${context.what}`, {
      cause: err,
      denied: e.code === "EACCES",
    });
  }
  if (e.statusCode === 409 && /is not running|is paused|restarting/i.test(detail) && context.containerId) {
    return new SandboxNotRunningError(context.containerId, { cause: err });
  }
  if (ADDRESS_POOLS_USED_UP.test(detail)) return addressPoolsUsedUp(context.what, detail, err);
  const full = NETWORK_ADDRESSES_USED_UP.exec(detail);
  if (full) return networkAddressesUsedUp(context.what, full[1] ?? "", detail, err);
  if (e.statusCode === 404) return new NotFoundError(`${context.what}: ${detail}`);
  return new SandboxError(`${context.what} failed: ${detail}`, { cause: err });
}
