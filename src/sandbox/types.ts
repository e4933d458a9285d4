/**
 * The sandbox interface: the one seam between warden's controller and the place where tools run.
 * Everything that touches files or runs commands goes through a `Sandbox`. `DockerSandbox` is the
 * implementation on the Docker Engine API; tests and other backends implement the same interface.
 */
import type { Readable } from "node:stream";
// types.js, not index.js: the channel protocol imports these types and must stay free of Docker code.
import type { NetworkOptions } from "../egress/types.js";

/** Where the workspace lives inside every sandbox. Relative tool paths resolve against it. */
export const WORKSPACE_DIR = "/workspace";

/**
 * How the host workspace directory is exposed:
 * - `copy` (default): copied in through the Docker archive API into a size-limited writable area;
 *   the host directory is never written.
 * - `ro`: bind-mounted read-only.
 * - `rw`: bind-mounted read-write (explicit opt-in: tools write the host directly).
 */
export type WorkspaceMode = "ro" | "copy" | "rw";

/** Resource limits of one sandbox. All must be positive finite numbers. */
export interface SandboxLimits {
  /** Memory cap in bytes; swap is set equal, so the container cannot swap. Default 1 GiB. */
  memoryBytes: number;
  /** CPU cap in CPUs (1.5 = one and a half cores). Default 1. */
  cpus: number;
  /**
   * Maximum number of processes and threads (cgroup pids.max). Default 256. warden-helper and
   * PID 1 keep up to HELPER_PIDS_RESERVE (40) of them; minPidsFor(n) fits n calls at once.
   */
  pids: number;
  /** Size of the tmpfs at /tmp, and of the one at HOME (/home/sandbox), each in bytes. Default 64 MiB. */
  tmpBytes: number;
  /** Size of the writable workspace in `copy` mode, in bytes. Default 1 GiB. */
  workspaceBytes: number;
}

/** An extra host directory mounted read-only at `containerPath`. */
export interface ReadOnlyMount {
  hostPath: string;
  containerPath: string;
}

/** A host directory exposed at /workspace, and how (see WorkspaceMode). */
interface WorkspaceSpec {
  hostPath: string;
  /** Default `copy`. */
  mode?: WorkspaceMode;
  /** Copy mode only: entries left out of the copy, gitignore syntax relative to hostPath. */
  exclude?: string[];
  /** Copy mode only: a relative POSIX path (`dir/` for a directory) to leave out when true. */
  excludeIf?: (relPath: string) => boolean;
}

/**
 * What a sandbox is made from. Every field is optional; defaults are the hardened ones. The same
 * spec makes an equivalent sandbox on every backend that has the capabilities it asks for
 * (BackendCapabilities); one that asks for more is refused with InvalidArgumentError naming the
 * field, never silently given less.
 */
export interface SandboxSpec {
  /** Image to run. Default: warden-sandbox:latest, built by `warden images build`. */
  image?: string;
  /** Host directory at /workspace. Without it the workspace starts empty. */
  workspace?: WorkspaceSpec;
  /** Extra read-only mounts of host directories. */
  mounts?: ReadOnlyMount[];
  /** Resource limits; unspecified fields take the defaults (DEFAULT_LIMITS). */
  limits?: Partial<SandboxLimits>;
  /** Isolation: `runc` (default) or `runsc` (gVisor; on Kubernetes, the backend's RuntimeClass). */
  runtime?: "runc" | "runsc";
  /** Lifetime after which `warden gc` may remove the sandbox, in ms. Default 24 h. */
  ttlMs?: number;
  /** How calls reach the sandbox: the helper's `channel` (default) or, Docker only, `docker-exec`. */
  execPath?: "channel" | "docker-exec";
  /** `{ mode: "none" }` (default: no network interface) or an egress allowlist (docs/network.md). */
  network?: NetworkOptions;
}

/**
 * Whose a sandbox is, written to its labels (Docker) or annotations (Kubernetes) before it
 * exists, so that `gc`, `list` and `adopt` judge it after a crash.
 */
export interface SandboxIdentity {
  /** Default: a random UUID. Letters, digits and `_.:@-`, at most 128. */
  sessionId?: string;
  /** Default `local`. Same alphabet as sessionId. */
  tenant?: string;
  /**
   * The owner: default `hostname:pid` of this process (gc treats the sandbox as orphaned once that
   * process is gone); a server that adopts its sandboxes after a restart passes a stable id.
   */
  controllerId?: string;
}

/** Options of one backend call. */
export interface CallOptions {
  /** Cancels the call; anything it had created is removed before it rejects with AbortError. */
  signal?: AbortSignal;
}

/**
 * All three parts in one bag, for createSandbox's callers (the library's one-call form); backends
 * take them apart.
 */
export interface SandboxOptions extends SandboxSpec, SandboxIdentity, CallOptions {}

/** A command: an argv run directly, or a script run with `bash -c`. */
export type ExecCommand = { argv: string[] } | { shell: string };

/** Options for one command. stdin is always /dev/null and there is never a TTY. */
export interface ExecOptions {
  /** Working directory inside the sandbox. Default /workspace. */
  cwd?: string;
  /** The only environment variables the command sees besides PATH, HOME, LANG (nothing from the host). */
  env?: Record<string, string>;
  /** Wall-clock limit in ms. On expiry the whole process group gets TERM, then KILL. */
  timeoutMs?: number;
  /** Aborting kills the whole process group the same way and resolves with the partial output. */
  signal?: AbortSignal;
  /**
   * Called with each stdout chunk as it arrives (no stream frame headers, ever). It may return a
   * promise (backpressure, e.g. a full spill queue): the exec path then reads no more of the
   * stream until it settles, so the command's pipe fills and the command waits. Bytes already read
   * (at most one read of the transport, a few frames) are still delivered meanwhile; nothing is
   * lost or reordered. On the channel path the pause holds the session's whole channel stream
   * (its other requests wait too) and ends when the call ends, by exit, abort, timeout or close.
   */
  onStdout?: OutputCallback;
  /** Called with each stderr chunk as it arrives; may return a promise, as onStdout. */
  onStderr?: OutputCallback;
}

/**
 * An exec output callback: a chunk in. A returned promise (any thenable) is waited for before more
 * is read; any other return value is ignored.
 */
export type OutputCallback = (chunk: Buffer) => unknown;

/** Outcome of a command. Output is delivered through the callbacks, never buffered here. */
export interface ExecResult {
  /**
   * Exit status: the process's own code; 128+N when killed by signal N (never 0);
   * 124 when `timedOut` (GNU timeout's convention); 130 when `aborted`.
   */
  exitCode: number;
  timedOut: boolean;
  aborted: boolean;
  durationMs: number;
}

/** File metadata from inside the sandbox. `mode` holds the permission bits only (e.g. 0o644). */
export interface FileStat {
  type: "file" | "directory" | "symlink" | "other";
  size: number;
  mode: number;
  mtimeMs: number;
}

/** One directory entry; `type` is the entry's own type (symlinks are not followed). */
export interface DirEntry {
  name: string;
  type: FileStat["type"];
}

/** What of a listing to carry back: the first `first` entries in name order (see SortedListing; src/sandbox/listing.ts). */
export interface ListingView {
  /** Entries shown (>= 1). */
  first: number;
  /** `head` carries shown entries until their names, joined by one byte each, reach headBytes + 2 bytes. */
  headBytes: number;
  /** Symlinks of `rest` carried by name (the first ones). */
  maxSymlinks: number;
}

/** The shown entries after `head`, summarised. */
export interface ListingRest {
  /** Entries. */
  count: number;
  /** UTF-8 bytes of their names. */
  nameBytes: number;
  /** Newline characters in their names. */
  nameNewlines: number;
  /** Entries of type "directory". */
  directories: number;
  /** The first ListingView.maxSymlinks of them that are symlinks, in order. */
  symlinks: DirEntry[];
  /** The last shown entry (null when `count` is 0). */
  last: DirEntry | null;
}

/**
 * The first min(first, total) entries of a listing in name order: `head` in full, up to the first
 * entry whose names (UTF-8, joined by one byte each) reach headBytes + 2 bytes (all of them when
 * they never do), and `rest` summarising the others shown.
 */
export interface SortedListing {
  /** Entries in the directory. */
  total: number;
  head: DirEntry[];
  rest: ListingRest;
}

/** What to read: a byte range, or a line range (1-based) with a byte cap. */
export type ReadRange =
  | { kind: "bytes"; offset: number; length: number }
  | { kind: "lines"; startLine: number; maxLines: number; maxBytes: number };

/** Bytes read plus what is known of the whole file. */
export interface ReadFileResult {
  data: Buffer;
  /** Size of the whole file in bytes. */
  totalBytes: number;
  /** Number of lines in the whole file, when it was counted (line reads). */
  totalLines?: number;
}

/** A path changed in the workspace relative to what was copied in. */
export interface WorkspaceChange {
  path: string;
  kind: "added" | "modified" | "deleted";
}

/** Facts about a created sandbox, for logs and `warden gc`. */
export interface SandboxInfo {
  containerId: string;
  sessionId: string;
  tenant: string;
  image: string;
  /**
   * What runs the sandbox. Docker: the container's OCI runtime, `runc` or `runsc` (gVisor).
   * Kubernetes: the Pod's RuntimeClass name (backend.runtimeClassName, e.g. `gvisor`; the node maps
   * it to a handler such as runsc, which the API does not show), or `default` for a Pod without one
   * (the node's default runtime). A Pod's runtime follows the cluster, never options.runtime.
   */
  runtime: string;
  workspaceMode: WorkspaceMode;
  /** Container paths the tools may touch: the workspace and the extra mounts. */
  roots: string[];
  createdAt: Date;
  expiresAt: Date;
  /** The path calls take: `channel` (warden-helper) or `docker-exec` (asked for, or the fallback). */
  execPath?: "channel" | "docker-exec";
  /**
   * What carries the channel (execPath `channel` only): `socket` (Docker: a unix socket from the
   * controller to the helper, src/sandbox/docker/channel/socket.ts), `attach` (Docker: the
   * container's attach stream, when the socket could not be used; the reason is logged) or
   * `exec-stream` (Kubernetes: a pods/exec stream).
   */
  channelTransport?: string;
  /**
   * The host uid (= gid) every process of the sandbox runs as: its own, drawn per sandbox (see
   * docs/security.md), or 1000 for a `rw` workspace. Never 0.
   */
  uid?: number;
  /** `none`, or `allowlist` with the gateway's proxy URL (the commands' HTTP(S)_PROXY). */
  network?: { mode: "none" } | { mode: "allowlist"; proxyUrl: string; gatewayContainerId: string };
}

// The background-process part of the seam (helper protocol version 9): starting a process's shim
// and naming the shims a helper keeps; channel/protocol/procs.ts implements it, src/process builds
// the process model on it.

/** A shim as the helper knows it: its pid and start time (clock ticks, /proc/<pid>/stat field 22). */
export interface ShimRef {
  pid: number;
  startTime: number;
}

/** What to start in the background (see src/process/types.ts for the model around it). */
export interface SpawnRequest {
  /** The process's directory, `/tmp/.warden/procs/<id>`; the helper creates it (it must not exist). */
  dir: string;
  command: ExecCommand;
  /** Default /workspace. */
  cwd?: string;
  /** The caller's variables; BASE_ENV is added as for exec. */
  env?: Record<string, string>;
  /** Size of one output segment file, in bytes. */
  segmentBytes: number;
  /** Segments kept; older ones are removed. */
  keepSegments: number;
  /** After the main command exits, how long what it left keeps running (and writing) before it is killed, in ms. */
  graceMs: number;
  /** Run under a pseudo-terminal of this size. */
  pty?: { cols: number; rows: number };
}

/** A started shim: the shim's ShimRef and the command's pid (its process group id). */
export interface SpawnResult extends ShimRef {
  commandPid: number;
}

/** What a `keep` did: the shims still alive and kept, and how many unlisted shims it killed. */
export interface KeepResult {
  kept: number[];
  killed: number;
}

/** Background processes through one sandbox's helper; see the file comment. */
export interface ProcessIO {
  /**
   * Starts a shim. Rejects NotFoundError when argv[0] is not found, InvalidArgumentError for a
   * bad command, SandboxError when the helper predates version 9 or the start failed; nothing is
   * left in the sandbox then.
   */
  spawn(request: SpawnRequest, options?: { signal?: AbortSignal }): Promise<SpawnResult>;
  /**
   * The shims this controller owns: sent now, and first on every channel that replaces this one,
   * so no stray sweep kills them; every other shim (one a command made itself) is killed.
   */
  keep(shims: readonly ShimRef[], options?: { signal?: AbortSignal }): Promise<KeepResult>;
}

/**
 * A running sandbox. All paths are container paths; relative ones resolve against /workspace.
 * Methods reject with WardenError subclasses (SandboxNotRunningError once the container is gone).
 * `destroy` is idempotent; `await using` destroys on scope exit.
 */
export interface Sandbox extends AsyncDisposable {
  readonly info: SandboxInfo;

  /**
   * Background processes' shims (src/process builds on it): present on the channel path with a
   * helper of protocol version 9 or later, absent on the docker-exec path and the memory backend.
   */
  readonly processIO?: ProcessIO | undefined;

  /** Runs a command in its own process group; see ExecOptions and ExecResult. */
  exec(command: ExecCommand, options?: ExecOptions): Promise<ExecResult>;

  /** Reads a byte or line range of a file without loading the rest of it. Rejects NotFoundError. */
  readFile(path: string, range: ReadRange, options?: { signal?: AbortSignal }): Promise<ReadFileResult>;

  /**
   * Writes a whole file atomically (temp file in the same directory, then rename), creating parent
   * directories. The file is owned by the sandbox user; `mode` defaults to 0o644 (or the old mode
   * less its set-user-ID and set-group-ID bits). Rejects InvalidArgumentError for a `mode` with
   * either of those bits: no sandbox file may have them (images/sandbox/helper/filemode.go).
   */
  writeFile(path: string, data: Buffer, options?: { mode?: number; signal?: AbortSignal }): Promise<void>;

  /** lstat-like metadata, or null when nothing exists at the path. */
  stat(path: string, options?: { signal?: AbortSignal }): Promise<FileStat | null>;

  /**
   * Canonical absolute path, resolved inside the sandbox: symlinks and `..` followed; for a path
   * that does not exist yet, its deepest existing ancestor is resolved and the rest appended.
   */
  realpath(path: string, options?: { signal?: AbortSignal }): Promise<string>;

  /** Entries of a directory (dotfiles included), unsorted. Rejects NotFoundError. */
  listDir(path: string, options?: { signal?: AbortSignal }): Promise<DirEntry[]>;

  /**
   * The first `view.first` entries of a directory in the ls tool's name order, the others only
   * counted or summarised (see SortedListing): a huge directory's names are never all carried
   * here, and a large listing is parsed and sorted off the event loop (listing-sort.ts). Rejects
   * NotFoundError, InvalidArgumentError for a non-directory, ListingSortError (RATE_LIMITED) when a
   * large listing cannot be sorted now.
   */
  listDirSorted(path: string, view: ListingView, options?: { signal?: AbortSignal }): Promise<SortedListing>;

  /** The workspace as a tar stream (paths relative to /workspace). */
  exportWorkspace(options?: { signal?: AbortSignal }): Promise<Readable>;

  /** Paths added, modified or deleted since the workspace was set up, sorted by path. */
  changedPaths(options?: { signal?: AbortSignal }): Promise<WorkspaceChange[]>;

  /** Removes the container and its volumes. Safe to call twice. */
  destroy(): Promise<void>;
}
