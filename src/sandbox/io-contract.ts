/**
 * The contract both sandbox I/O paths keep (docker exec, docker/exec/; warden-helper's channel,
 * channel/): the checks of a caller's command, environment, timeout, path, range and mode, each
 * with the one message both paths throw, and the exit statuses and grace periods both report and
 * send. Pure: no I/O, no Docker.
 */
import { posix } from "node:path";
import { InvalidArgumentError, NotFoundError } from "../errors.js";
import type { ExecCommand, ExecOptions, ExecResult, ReadRange } from "./types.js";
import { WORKSPACE_DIR } from "./types.js";

/** Exit status reported when the timeout fired (GNU timeout's convention). */
const EXIT_TIMEOUT = 124;
/** Exit status reported when the signal aborted the command (128 + SIGINT). */
const EXIT_ABORTED = 130;
/**
 * Exit status reported when the command was stopped and no status came back (the engine gave
 * none, or the helper never reported the exit after KILL): 128 + SIGKILL, never success.
 */
export const EXIT_KILLED = 137;

/**
 * Grace between TERM and KILL when a timeout or abort stops a command's process group, in ms.
 * Both paths send this value: docker exec as tenths of a second to the kill script
 * (docker/exec/wrapper.ts), the channel as the `kill` frame's `graceMs`.
 */
export const KILL_GRACE_MS = 500;
/** KILL_GRACE_MS in seconds (0.5), the unit of the docker-exec kill script. */
export const KILL_GRACE_SECONDS = KILL_GRACE_MS / 1000;
/**
 * After a command's main process exits, how long (ms) children still holding its output pipes may
 * keep writing before the group is killed (the channel's `pipeGraceMs`; Pi's bash tool waits 100 ms too).
 */
export const PIPE_GRACE_MS = 100;

/**
 * The sandbox user's home (HOME): its own size-limited tmpfs in every sandbox (hardening.ts, the
 * Pod's `home` emptyDir), where `pip install` (~/.local) and `npm install`'s cache (~/.npm) write.
 */
export const SANDBOX_HOME = "/home/sandbox";

/** The whole environment of the container; a command adds only what the caller passes. */
export const BASE_ENV: readonly string[] = [
  "LANG=C.UTF-8",
  "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
  `HOME=${SANDBOX_HOME}`,
];

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** What a checked command runs: its argv and its whole environment (`NAME=value`). */
export interface CheckedCommand {
  argv: string[];
  env: string[];
}

/**
 * Checks a command and its options before anything runs: argv (or `bash -c <shell>`), the
 * environment (BASE_ENV plus the caller's variables, nothing else) and the timeout.
 * Throws InvalidArgumentError naming the bad field.
 */
export function checkExec(command: ExecCommand, options: ExecOptions = {}): CheckedCommand {
  const argv = commandArgv(command);
  const env = commandEnv(options.env);
  if (options.timeoutMs !== undefined && !(options.timeoutMs > 0)) {
    throw new InvalidArgumentError(
      `timeoutMs must be a positive number of milliseconds, got ${options.timeoutMs}.`,
    );
  }
  return { argv, env };
}

/**
 * The argv a command runs as: `argv` as given, or `bash -c <shell>`.
 * Throws InvalidArgumentError for an empty or non-string argv, or a non-string script.
 */
function commandArgv(command: ExecCommand): string[] {
  if ("argv" in command) {
    const { argv } = command;
    if (!Array.isArray(argv) || argv.length === 0 || argv.some((a) => typeof a !== "string")) {
      throw new InvalidArgumentError("command.argv must be a non-empty array of strings.");
    }
    return argv;
  }
  if (typeof command.shell !== "string") {
    throw new InvalidArgumentError("command.shell must be a string (a bash script).");
  }
  return ["bash", "-c", command.shell];
}

/**
 * The command's whole environment: BASE_ENV (LANG, PATH, HOME) plus the caller's variables,
 * nothing else (not even Docker's HOSTNAME). Throws InvalidArgumentError for a bad name or value.
 */
function commandEnv(env: Record<string, string> | undefined): string[] {
  const out = [...BASE_ENV];
  for (const [name, value] of Object.entries(env ?? {})) {
    if (!ENV_NAME.test(name) || typeof value !== "string" || value.includes("\0")) {
      throw new InvalidArgumentError(
        `env.${name} is not a valid environment variable (name [A-Za-z_][A-Za-z0-9_]*, string value without NUL).`,
      );
    }
    out.push(`${name}=${value}`);
  }
  return out;
}

/**
 * The ExecResult of a finished command: the process's own `exitCode`, unless it was stopped
 * (`stop`), then EXIT_TIMEOUT or EXIT_ABORTED. `durationMs` is rounded to whole ms.
 */
export function execResult(
  exitCode: number,
  stop: "timeout" | "abort" | undefined,
  durationMs: number,
): ExecResult {
  const ms = Math.round(durationMs);
  if (stop === "timeout") return { exitCode: EXIT_TIMEOUT, timedOut: true, aborted: false, durationMs: ms };
  if (stop === "abort") return { exitCode: EXIT_ABORTED, timedOut: false, aborted: true, durationMs: ms };
  return { exitCode, timedOut: false, aborted: false, durationMs: ms };
}

/** Longest name of one path component, in bytes (Linux's NAME_MAX: ext4, overlayfs, tmpfs). */
export const NAME_MAX_BYTES = 255;
/** Longest absolute path a system call takes, in bytes without its NUL (Linux's PATH_MAX, 4096, less 1). */
export const PATH_MAX_BYTES = 4095;

/**
 * Bytes the helper's temporary name adds to a written file's name: it writes
 * `.<name>.warden-<12 hex>.tmp` beside it and renames it over (images/sandbox/helper/files.go).
 */
const WRITE_TEMP_NAME_EXTRA_BYTES = 25;

/**
 * Absolute container path for `path` (relative paths resolve against /workspace).
 * Throws InvalidArgumentError for a non-string, empty, or NUL-containing path, a component over
 * NAME_MAX_BYTES or a resolved path over PATH_MAX_BYTES (UTF-8), naming the limit: the kernel
 * would refuse it with ENAMETOOLONG, the caller's fault, not the sandbox's.
 */
export function containerPath(path: string): string {
  return boundedPath(path, 0);
}

/**
 * containerPath for a file to write: its name and the whole path are bounded
 * WRITE_TEMP_NAME_EXTRA_BYTES lower (230 and 4070 bytes), so that its temporary name fits too.
 */
export function containerWritePath(path: string): string {
  return boundedPath(path, WRITE_TEMP_NAME_EXTRA_BYTES);
}

function boundedPath(path: string, extraBytes: number): string {
  if (typeof path !== "string" || path === "" || path.includes("\0")) {
    throw new InvalidArgumentError("path must be a non-empty string without NUL bytes.");
  }
  const resolved = posix.resolve(WORKSPACE_DIR, path);
  const why =
    extraBytes > 0 ? ` less the ${extraBytes} bytes of the temporary name a file is written under` : "";
  const names = resolved.split("/");
  // Only the last name gets the temporary name's extra bytes.
  const maxOf = (i: number) => NAME_MAX_BYTES - (i === names.length - 1 ? extraBytes : 0);
  const at = names.findIndex((name, i) => Buffer.byteLength(name) > maxOf(i));
  const long = names[at];
  if (long !== undefined) {
    const max = maxOf(at);
    throw new InvalidArgumentError(
      `path has a name of ${Buffer.byteLength(long)} bytes ('${long.slice(0, 32)}…'), over the ${max}-byte limit of a file name (NAME_MAX${max < NAME_MAX_BYTES ? why : ""}); use a shorter name.`,
    );
  }
  const pathMax = PATH_MAX_BYTES - extraBytes;
  if (Buffer.byteLength(resolved) > pathMax) {
    throw new InvalidArgumentError(
      `path is ${Buffer.byteLength(resolved)} bytes once resolved, over the ${pathMax}-byte limit of a path (PATH_MAX${why}); use a shorter path.`,
    );
  }
  return resolved;
}

/**
 * Checks a read range: byte `offset`/`length` >= 0; line `startLine` >= 1, `maxLines` and
 * `maxBytes` >= 0; all safe integers. Throws InvalidArgumentError naming the field.
 */
export function checkReadRange(range: ReadRange): void {
  if (range.kind === "bytes") {
    checkCount("range.offset", range.offset, true);
    checkCount("range.length", range.length, true);
  } else {
    checkCount("range.startLine", range.startLine, false);
    checkCount("range.maxLines", range.maxLines, true);
    checkCount("range.maxBytes", range.maxBytes, true);
  }
}

/**
 * Checks a file mode: permission bits 0..0o7777 without the set-user-ID and set-group-ID bits
 * (the sticky bit may be set), or undefined. Throws InvalidArgumentError.
 */
export function checkFileMode(mode: number | undefined): void {
  if (mode !== undefined && (!Number.isInteger(mode) || mode < 0 || mode > 0o7777)) {
    throw new InvalidArgumentError(`mode must be permission bits between 0 and 0o7777, got ${mode}.`);
  }
  if (mode !== undefined && (mode & SET_ID_BITS) !== 0) {
    throw new InvalidArgumentError(
      `mode 0o${mode.toString(8)} has the set-user-ID or set-group-ID bit, which no sandbox file may have; give permission bits and the sticky bit only (at most 0o1777).`,
    );
  }
}

/** S_ISUID | S_ISGID: refused in every sandbox file's mode (images/sandbox/helper/filemode.go). */
const SET_ID_BITS = 0o6000;

function checkCount(name: string, value: number, zeroOk: boolean): void {
  if (!Number.isSafeInteger(value) || value < (zeroOk ? 0 : 1)) {
    throw new InvalidArgumentError(`${name} must be an integer ${zeroOk ? ">= 0" : ">= 1"}, got ${value}.`);
  }
}

/** The error for a path where nothing exists (both paths word it the same). */
export function notFoundError(path: string): NotFoundError {
  return new NotFoundError(`No such file or directory in the sandbox: ${path}`);
}

/** The error for a directory operation (listDir) on a path that is not a directory. */
export function notDirectoryError(path: string): InvalidArgumentError {
  return new InvalidArgumentError(`${path} is not a directory; pass a directory path.`);
}

/** The error for a file operation (read, write) on a directory. */
export function isDirectoryError(path: string): InvalidArgumentError {
  return new InvalidArgumentError(`${path} is a directory; pass a file path.`);
}
