/**
 * `SandboxIO`: the one seam through which a sandbox runs commands and touches files inside its
 * container. Two implementations: docker exec (docker/exec/, one exec per call) and
 * warden-helper's channel (channel/protocol/, frames over one stream, no Docker in it). A
 * DockerSandbox picks one when it is created or adopted and keeps it; both keep the same contract
 * (io-contract.ts: the same checks, messages, exit statuses and grace periods) and pass the same
 * engine suites.
 */

import type { RawListing } from "./listing.js";
import type {
  ExecCommand,
  ExecOptions,
  ExecResult,
  FileStat,
  ProcessIO,
  ReadFileResult,
  ReadRange,
} from "./types.js";

/** Cancellation of one file operation: AbortError once `signal` fires. */
interface IOOptions {
  signal?: AbortSignal;
}

/**
 * Commands and file operations in one container. Paths are absolute container paths (the caller
 * resolves relative ones against /workspace with io-contract's containerPath). Every method rejects
 * with WardenError subclasses: InvalidArgumentError for a malformed input (before anything runs),
 * NotFoundError for a missing path, SandboxNotRunningError once the container (or the channel) is
 * gone, SandboxError for other failures.
 */
export interface SandboxIO {
  /** Which path this is, as SandboxInfo.execPath names it. */
  readonly kind: "channel" | "docker-exec";

  /**
   * Runs `command` in its own process group; output streams to `onStdout`/`onStderr` as it
   * arrives. Resolves with the exit status (124 timeout, 130 abort, 128+N signal N; see ExecResult),
   * also after a timeout or abort, once the group was TERMed and, KILL_GRACE_MS later, KILLed.
   */
  exec(command: ExecCommand, options?: ExecOptions): Promise<ExecResult>;

  /** A byte or line range of a file (line reads count the file's lines); memory is the range only. */
  readFile(path: string, range: ReadRange, options?: IOOptions): Promise<ReadFileResult>;

  /** Writes a whole file atomically, creating parents; `mode` 0..0o7777, default the old mode or 0o644. */
  writeFile(path: string, data: Buffer, options?: IOOptions & { mode?: number }): Promise<void>;

  /** lstat: the path's own metadata, or null when nothing is there. */
  stat(path: string, options?: IOOptions): Promise<FileStat | null>;

  /** Canonical path as GNU `realpath -m`: symlinks followed, a missing tail appended. */
  realpath(path: string, options?: IOOptions): Promise<string>;

  /**
   * A directory's entries (dotfiles included, unsorted) as the path's bytes, parsed by the caller
   * (listing.ts: on this thread, or in a worker when large). InvalidArgumentError when not a directory.
   */
  listDirRaw(path: string, options?: IOOptions): Promise<RawListing>;

  /** Background processes (the channel with a version-9 helper); absent on the docker-exec path. */
  readonly procs?: ProcessIO;

  /** Releases what the path holds open (the channel's stream). Idempotent. */
  close(): void;
}
