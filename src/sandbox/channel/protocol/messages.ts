/**
 * Bodies of the channel's frames (JSON unless noted), shared with images/sandbox/helper, and the
 * table from the helper's errno names to warden errors.
 */
import {
  InvalidArgumentError,
  PermissionDeniedError,
  SandboxError,
  type WardenError,
} from "../../../errors.js";
import { isDirectoryError, notDirectoryError, notFoundError } from "../../io-contract.js";

/** `exec` request: argv[0] is looked up in PATH; the command leads a new session (setsid). */
export interface ExecRequestBody {
  argv: string[];
  cwd: string;
  /** The command's whole environment, `NAME=value` (BASE_ENV plus the caller's). */
  env: string[];
  /** After the main process exits, how long children holding its pipes may keep writing, in ms (default 100). */
  pipeGraceMs?: number;
}

/**
 * `kill` request: TERM to the command's process group, KILL `graceMs` later. The controller always
 * sends KILL_GRACE_MS (500, ../../io-contract.ts); a helper given 0 or no value uses 500 ms too.
 */
export interface KillRequestBody {
  /** Grace between TERM and KILL, in ms. */
  graceMs: number;
}

/** `exit` body: `code` is the exit status, 128+N for a death by signal N. */
export interface ExitBody {
  code: number;
  signal?: number;
}

/** `read` request (JSON + no data); the result carries ReadResultBody + the bytes. */
export type ReadRequestBody =
  | { path: string; kind: "bytes"; offset: number; length: number }
  | {
      path: string;
      kind: "lines";
      startLine: number;
      maxLines: number;
      maxBytes: number;
      countLines: boolean;
    };

/** `read` result: newline facts are present only when `counted` (the whole file was scanned). */
export interface ReadResultBody {
  totalBytes: number;
  counted: boolean;
  newlines: number;
  endsWithNewline: boolean;
}

/** `error` body: an errno name (ENOENT, ENOTDIR, EISDIR, EACCES, EROFS, ENOSPC, ELOOP, EEXIST, EINVAL, EIO). */
export interface ErrorBody {
  errno: string;
  message: string;
}

/** `pong` body. */
export interface PongBody {
  version: string;
  pid: number;
}

/** Parses a JSON payload; throws SandboxError naming the frame when it is not JSON. */
export function parseJson(payload: Buffer, what: string): unknown {
  try {
    return JSON.parse(payload.toString("utf8"));
  } catch (err) {
    throw new SandboxError(`Malformed ${what} frame from warden-helper: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null;
}

/** Reads an `exit` body; throws SandboxError when the code is missing. */
export function toExitBody(v: unknown): ExitBody {
  if (!isRecord(v) || typeof v.code !== "number")
    throw new SandboxError("Malformed exit frame from warden-helper.");
  return { code: v.code, ...(typeof v.signal === "number" ? { signal: v.signal } : {}) };
}

/** Reads an `error` body (tolerant: unknown shapes become EIO). */
export function toErrorBody(v: unknown): ErrorBody {
  if (!isRecord(v)) return { errno: "EIO", message: "unknown helper error" };
  return {
    errno: typeof v.errno === "string" ? v.errno : "EIO",
    message: typeof v.message === "string" ? v.message : "unknown helper error",
  };
}

/** Reads a `read` result body. */
export function toReadResultBody(v: unknown): ReadResultBody {
  if (!isRecord(v) || typeof v.totalBytes !== "number") {
    throw new SandboxError("Malformed read result from warden-helper.");
  }
  return {
    totalBytes: v.totalBytes,
    counted: v.counted === true,
    newlines: typeof v.newlines === "number" ? v.newlines : 0,
    endsWithNewline: v.endsWithNewline === true,
  };
}

/**
 * The helper's errno names as warden errors, worded as the docker-exec path words them
 * (../../io-contract.ts). Where the caller's path is at fault the error is a client one:
 * ENOENT/ENOTDIR are NotFoundError; EISDIR, NOTDIR (the listed path is not a directory), EINVAL,
 * ELOOP (a symlink loop), EEXIST (a parent on the path is not a directory: mkdir met a file) and
 * ENAMETOOLONG are InvalidArgumentError; EACCES (EPERM too) and EROFS are PermissionDeniedError
 * (a file without permission, a read-only directory, a link through /proc/1/root). ENOSPC, EIO and
 * anything else are SandboxError. `verb` and `path` name the operation ("reading", "/workspace/a").
 */
export function errorFromHelper(body: ErrorBody, verb: string, path: string): WardenError {
  switch (body.errno) {
    case "ENOENT":
    case "ENOTDIR":
      return notFoundError(path);
    case "EISDIR":
      return isDirectoryError(path);
    case "NOTDIR":
      return notDirectoryError(path);
    case "EINVAL":
      return new InvalidArgumentError(`${verb} ${path}: ${body.message}.`);
    case "ELOOP":
    case "ENAMETOOLONG":
      return new InvalidArgumentError(
        `${verb} ${path} failed in the sandbox: ${body.message} (${body.errno}).`,
      );
    case "EEXIST":
      return new InvalidArgumentError(
        `${verb} ${path} failed in the sandbox: ${body.message} (EEXIST): a parent on the path exists and is not a directory; name a path whose parents are directories.`,
      );
    case "EACCES":
    case "EROFS":
      return new PermissionDeniedError(
        `${verb} ${path} failed in the sandbox: ${body.message} (${body.errno}).`,
      );
    case "ENOSPC":
      return new SandboxError(
        `${verb} ${path} failed: no space left in the sandbox; free space or raise the limit.`,
      );
    default:
      return new SandboxError(`${verb} ${path} failed in the sandbox: ${body.message} (${body.errno}).`);
  }
}
