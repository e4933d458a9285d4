/**
 * FakeSandbox: the one `Sandbox` stand-in of the unit tests. An in-memory tree (files with their mode,
 * directories, symlinks), `realpath` following links like `realpath -m`, byte and line reads,
 * `exec` scripted by the test (no process runs), a fixed change list and a tar of the workspace for
 * `exportWorkspace`. No engine, no host files; never used outside tests.
 */
import { posix } from "node:path";
import { Readable } from "node:stream";
import { pack } from "tar-stream";
import { NotFoundError } from "../../errors.js";
import { LineRangeCollector } from "../../truncate/line-range.js";
import { sortListing } from "../listing-sort.js";
import type {
  DirEntry,
  ExecCommand,
  ExecOptions,
  ExecResult,
  FileStat,
  ListingView,
  ReadFileResult,
  ReadRange,
  Sandbox,
  SandboxInfo,
  SortedListing,
  WorkspaceChange,
} from "../types.js";
import { WORKSPACE_DIR } from "../types.js";

type Node =
  | { type: "file"; data: Buffer; mode: number }
  | { type: "directory" }
  | { type: "symlink"; target: string };

/** What a scripted exec does: the test pushes output through `opts` and returns the result. */
export type ExecScript = (command: ExecCommand, opts: ExecOptions) => Promise<ExecResult>;

/** An ExecScript that emits `chunks` on stdout (strings or Buffers) and returns `result`. */
export function emitting(chunks: (string | Buffer)[], result: Partial<ExecResult> = {}): ExecScript {
  return async (_command, opts) => {
    for (const chunk of chunks) opts.onStdout?.(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
    return { exitCode: 0, timedOut: false, aborted: false, durationMs: 1, ...result };
  };
}

/** What an argv handler returns: stdout chunks (strings or bytes), stderr and an exit code. */
export interface FakeExecReply {
  stdout?: (string | Buffer)[];
  stderr?: string;
  exitCode?: number;
}

/** Answers one command by its argv (a shell command arrives as `bash -c <command>`). */
export type FakeExecHandler = (argv: string[], options: ExecOptions) => FakeExecReply;

/** The argv of a command as the fake records it. */
export function argvOf(command: ExecCommand): string[] {
  return "argv" in command ? command.argv : ["bash", "-c", command.shell];
}

/**
 * An ExecScript from an argv handler: stdout chunks stop when `signal` fires, and then the command
 * ends aborted with 130 (as the engine's exec does).
 */
export function replying(handler: FakeExecHandler): ExecScript {
  return async (command, options) => {
    const reply = handler(argvOf(command), options);
    let aborted = false;
    for (const chunk of reply.stdout ?? []) {
      if (options.signal?.aborted) {
        aborted = true;
        break;
      }
      options.onStdout?.(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk, "utf8"));
    }
    if (reply.stderr) options.onStderr?.(Buffer.from(reply.stderr, "utf8"));
    aborted ||= options.signal?.aborted ?? false;
    return { exitCode: aborted ? 130 : (reply.exitCode ?? 0), timedOut: false, aborted, durationMs: 1 };
  };
}

/** How a FakeSandbox starts. */
export interface FakeSandboxOptions {
  /** Overrides of the default info (container "fake", tenant "test-fake", roots ["/workspace"]). */
  info?: Partial<SandboxInfo>;
  /** Workspace files: workspace-relative or absolute path -> content. */
  files?: Record<string, string | Buffer>;
  /** Symlinks: absolute or workspace-relative path -> target (relative targets resolve from the link's folder). */
  links?: Record<string, string>;
  /** What changedPaths answers. */
  changes?: WorkspaceChange[];
}

/** The in-memory sandbox of the unit tests (see the module comment). */
export class FakeSandbox implements Sandbox {
  readonly nodes = new Map<string, Node>([
    ["/", { type: "directory" }],
    [WORKSPACE_DIR, { type: "directory" }],
  ]);
  readonly info: SandboxInfo;
  /** The commands exec was called with, in order. */
  readonly commands: ExecCommand[] = [];
  /** Replace to script exec; the default emits nothing and exits 0. */
  execScript: ExecScript = emitting([]);
  /** What changedPaths answers. */
  changes: WorkspaceChange[];
  /** How many writeFile calls were made. */
  writes = 0;

  constructor(options: FakeSandboxOptions = {}) {
    this.info = {
      containerId: "fake",
      sessionId: "fake-session",
      tenant: "test-fake",
      image: "fake",
      runtime: "runc",
      workspaceMode: "copy",
      roots: [WORKSPACE_DIR],
      createdAt: new Date(0),
      expiresAt: new Date(0),
      ...options.info,
    };
    for (const [path, content] of Object.entries(options.files ?? {})) this.file(path, content);
    for (const [path, target] of Object.entries(options.links ?? {})) this.symlink(path, target);
    this.changes = options.changes ?? [];
  }

  /** A fake sandbox with `files` (workspace-relative path -> content). */
  static async create(files: Record<string, string | Buffer> = {}): Promise<FakeSandbox> {
    return new FakeSandbox({ files });
  }

  /** Scripts exec by argv (shorthand for `execScript = replying(handler)`). */
  set execHandler(handler: FakeExecHandler) {
    this.execScript = replying(handler);
  }

  /** The argv of every command exec ran, in order. */
  get execs(): string[][] {
    return this.commands.map(argvOf);
  }

  /** Creates a file (and its parent directories); `path` is absolute or workspace-relative. */
  file(path: string, data: string | Buffer, mode = 0o644): this {
    const abs = posix.resolve(WORKSPACE_DIR, path);
    this.mkdir(posix.dirname(abs));
    this.nodes.set(abs, { type: "file", data: Buffer.from(data), mode });
    return this;
  }

  /** Writes a workspace file (test setup). */
  async put(path: string, content: string | Buffer): Promise<void> {
    this.file(path, content);
  }

  /** Creates a symlink `path` -> `target` (and the link's parent directories). */
  symlink(path: string, target: string): this {
    const abs = posix.resolve(WORKSPACE_DIR, path);
    this.mkdir(posix.dirname(abs));
    this.nodes.set(abs, { type: "symlink", target });
    return this;
  }

  /** Creates a directory and its parents. */
  mkdir(path: string): this {
    for (let d = posix.resolve(WORKSPACE_DIR, path); d !== "/" && !this.nodes.has(d); d = posix.dirname(d)) {
      this.nodes.set(d, { type: "directory" });
    }
    return this;
  }

  /** The bytes of a file (links not followed), or undefined. */
  bytes(path: string): Buffer | undefined {
    const n = this.nodes.get(posix.resolve(WORKSPACE_DIR, path));
    return n?.type === "file" ? n.data : undefined;
  }

  async exec(command: ExecCommand, options: ExecOptions = {}): Promise<ExecResult> {
    this.commands.push(command);
    // GET /workspace's measuring command (src/server/http/workspace-download.ts): the files' total.
    if (argvOf(command)[2]?.startsWith("du -sb .")) {
      let total = 0;
      for (const n of this.nodes.values()) if (n.type === "file") total += n.data.length;
      return replying(() => ({ stdout: [`${total}\n`] }))(command, options);
    }
    return this.execScript(command, options);
  }

  async readFile(
    path: string,
    range: ReadRange,
    _options?: { signal?: AbortSignal },
  ): Promise<ReadFileResult> {
    const n = this.nodes.get(await this.realpath(path));
    if (n?.type !== "file") throw new NotFoundError(`File not found: ${path}`);
    if (range.kind === "bytes") {
      return { data: n.data.subarray(range.offset, range.offset + range.length), totalBytes: n.data.length };
    }
    const collector = new LineRangeCollector(range);
    collector.push(n.data);
    const { data, totalLines } = collector.finish();
    return { data, totalBytes: n.data.length, totalLines };
  }

  async writeFile(
    path: string,
    data: Buffer,
    options: { mode?: number; signal?: AbortSignal } = {},
  ): Promise<void> {
    const real = await this.realpath(path);
    const old = this.nodes.get(real);
    this.file(real, data, options.mode ?? (old?.type === "file" ? old.mode : 0o644));
    this.writes++;
  }

  /** The node's stat; a symlink is reported as itself (never followed), as the engine's lstat. */
  async stat(path: string, _options?: { signal?: AbortSignal }): Promise<FileStat | null> {
    const n = this.nodes.get(posix.resolve(WORKSPACE_DIR, path));
    if (!n) return null;
    if (n.type === "file") return { type: "file", size: n.data.length, mode: n.mode, mtimeMs: 0 };
    return { type: n.type, size: 0, mode: n.type === "symlink" ? 0o777 : 0o755, mtimeMs: 0 };
  }

  async realpath(path: string, _options?: { signal?: AbortSignal }): Promise<string> {
    let parts = posix.resolve(WORKSPACE_DIR, path).split("/").filter(Boolean);
    let out = "/";
    for (let hops = 0; parts.length > 0 && hops < 40; ) {
      const next = posix.join(out, parts.shift() as string);
      const n = this.nodes.get(next);
      if (n?.type === "symlink") {
        hops++;
        parts = [...posix.resolve(out, n.target).split("/").filter(Boolean), ...parts];
        out = "/";
      } else {
        out = next;
      }
    }
    return out;
  }

  async listDir(path: string, _options?: { signal?: AbortSignal }): Promise<DirEntry[]> {
    const dir = await this.realpath(path);
    if (this.nodes.get(dir)?.type !== "directory") throw new NotFoundError(`Directory not found: ${path}`);
    return [...this.nodes.entries()]
      .filter(([p]) => p !== dir && posix.dirname(p) === dir)
      .map(([p, n]) => ({ name: posix.basename(p), type: n.type }));
  }

  /** The real SandboxIO path's: this listing as the helper's listDir frame, through sortListing. */
  async listDirSorted(
    path: string,
    view: ListingView,
    options?: { signal?: AbortSignal },
  ): Promise<SortedListing> {
    const bytes = Buffer.from(JSON.stringify(await this.listDir(path)));
    return sortListing({ format: "json", bytes }, view, options?.signal);
  }

  /** A tar of the workspace's files (names relative to /workspace). */
  async exportWorkspace(): Promise<Readable> {
    const tar = pack();
    for (const [path, n] of this.nodes) {
      if (n.type === "file" && path.startsWith(`${WORKSPACE_DIR}/`)) {
        tar.entry({ name: path.slice(WORKSPACE_DIR.length + 1), mode: n.mode }, n.data);
      }
    }
    tar.finalize();
    return Readable.from(tar);
  }

  async changedPaths(): Promise<WorkspaceChange[]> {
    return this.changes;
  }

  async destroy(): Promise<void> {}

  async [Symbol.asyncDispose](): Promise<void> {}
}
