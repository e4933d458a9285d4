/**
 * Background processes of one session (issue 41): a command started in the background returns at
 * once with an id; its output (stdout and stderr as one stream, as Pi's bash tool and a terminal
 * show them) is kept in the sandbox, bounded, and read from any offset; it takes input, signals and
 * a terminal size; it ends with its session. Inside the sandbox each process is owned by a shim
 * (warden-helper `--proc-run`) that outlives the channel, so a restarted `warden serve` adopts a
 * session's processes with their output intact. The design and the files: docs/processes.md.
 */
import type { ExecCommand } from "../sandbox/index.js";

/** A terminal size in character cells. Both at least 1, at most 1000. */
export interface TerminalSize {
  cols: number;
  rows: number;
}

/** Signals a process may be sent (names without SIG). */
export const PROCESS_SIGNALS = [
  "TERM",
  "INT",
  "KILL",
  "HUP",
  "QUIT",
  "USR1",
  "USR2",
  "STOP",
  "CONT",
  "WINCH",
] as const;
export type ProcessSignal = (typeof PROCESS_SIGNALS)[number];

/** What to start. */
export interface StartProcessOptions {
  /** An argv run directly, or a script run with `bash -c`. */
  command: ExecCommand;
  /** Working directory in the sandbox. Default /workspace. */
  cwd?: string;
  /** Extra environment variables (the session's and BASE_ENV's are set too). */
  env?: Record<string, string>;
  /** Run under a pseudo-terminal of this size (REPLs, TUIs, `git add -p`); default: pipes. */
  pty?: TerminalSize;
  /** Cancels the start; a process that did start is killed before the call rejects. */
  signal?: AbortSignal;
}

/**
 * The controller's record of one process, kept on the host (a server's session record), never read
 * back from the sandbox: it is what the policy was told the process is.
 */
export interface ProcessRecord {
  /** `p1`, `p2`, … in start order within the session. */
  id: string;
  command: ExecCommand;
  cwd: string;
  pty?: TerminalSize;
  /** The shim's pid and start time (clock ticks since boot, /proc/<pid>/stat field 22). */
  shimPid: number;
  shimStartTime: number;
  /** The command's pid (its process group id). */
  commandPid: number;
  /** ISO-8601. */
  startedAt: string;
}

/** A process as `list` and `info` report it. */
export interface ProcessInfo {
  id: string;
  /** The command as one line: the script, or the argv joined by spaces. */
  commandLine: string;
  pty: boolean;
  state: "running" | "exited";
  /** Exit status once exited: the code, 128+N for a death by signal N. */
  exitCode?: number;
  /** The signal that ended it, when one did. */
  exitSignal?: number;
  startedAt: Date;
  endedAt?: Date;
  /** Bytes of output so far (the stream's length). */
  outputBytes: number;
  /** The first offset still kept: output before it was dropped to keep the bound. */
  keptFrom: number;
  /** Bytes that could not be kept at all (the sandbox's /tmp was full). */
  droppedBytes: number;
}

/** A piece of a process's output. */
export interface OutputSlice {
  /** Offset of `data`'s first byte in the stream. */
  offset: number;
  data: Buffer;
  /** Where the next read should start (offset + data.length). */
  nextOffset: number;
  /** Bytes asked for that are no longer kept (the read started at keptFrom instead). */
  skipped: number;
  process: ProcessInfo;
}

/** Per-session limits. */
export interface ProcessLimits {
  /** Processes running at once (default 8): the next start is refused (WardenError, code CONFLICT). */
  maxRunning: number;
  /** Exited processes whose output is still kept (default 16); the oldest is forgotten first. */
  maxExited: number;
  /** Output kept per process, in bytes (default 8 MiB, a multiple of segmentBytes). */
  keptOutputBytes: number;
  /** Size of one output segment file, in bytes (default 1 MiB). */
  segmentBytes: number;
}

/** The background processes of one session. */
export interface Processes {
  /** Starts a process. Rejects WardenError CONFLICT at the limit, InvalidArgumentError for a bad command/cwd/size. */
  start(options: StartProcessOptions): Promise<ProcessInfo>;
  /** Every process the session still knows, in start order. */
  list(options?: { signal?: AbortSignal }): Promise<ProcessInfo[]>;
  /** One process. Rejects NotFoundError for an unknown id. */
  info(id: string, options?: { signal?: AbortSignal }): Promise<ProcessInfo>;
  /** Output from `offset` (default 0), at most maxBytes (default 64 KiB). */
  read(
    id: string,
    options?: { offset?: number; maxBytes?: number; signal?: AbortSignal },
  ): Promise<OutputSlice>;
  /** Bytes to its stdin (or terminal). Rejects WardenError CONFLICT once it has exited. */
  write(id: string, data: Buffer): Promise<void>;
  /** Closes its stdin (under a terminal: sends the EOF character). */
  closeInput(id: string): Promise<void>;
  /** Sends a signal to its process group. */
  kill(id: string, signal?: ProcessSignal): Promise<void>;
  /** Changes its terminal's size (PTY processes only). */
  resize(id: string, size: TerminalSize): Promise<void>;
  /** Resolves when it has exited, or after timeoutMs with state `running`. */
  wait(id: string, options?: { timeoutMs?: number; signal?: AbortSignal }): Promise<ProcessInfo>;
  /** The host-side records, for a server to keep with its session (and pass back on adoption). */
  records(): ProcessRecord[];
}
