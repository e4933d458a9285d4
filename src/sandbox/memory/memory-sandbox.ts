/**
 * MemorySandbox: a Sandbox held in memory, the memory backend's (memory-backend.ts) and, through
 * test/helpers/fake-sandbox.ts, the unit tests'. An in-memory tree (files with their mode and mtime,
 * directories, symlinks), `realpath` following links like `realpath -m`, byte and line reads,
 * listings sorted by the shared sortListing, a tar of the workspace for `exportWorkspace` and
 * `changedPaths` against the hashes of what was copied in (workspace-copy.ts' records). `exec`
 * runs no process: it answers the few argv commands of memory-exec.ts. No engine, no host files
 * besides the copy-mode workspace read once at creation.
 */
import { createHash } from "node:crypto";
import { posix } from "node:path";
import { Readable } from "node:stream";
import { pack } from "tar-stream";
import { InvalidArgumentError, NotFoundError, SandboxNotRunningError } from "../../errors.js";
import { LineRangeCollector } from "../../truncate/index.js";
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
import { diffHashes, HASH_MAX_FILE_BYTES, metaRecord, type WorkspaceHashes } from "../workspace-hashes.js";
import { runMemoryCommand } from "./memory-exec.js";

/** One node of the tree: a file (bytes, permission bits, mtime in ms), a directory or a symlink. */
export type MemoryNode =
  | { type: "file"; data: Buffer; mode: number; mtimeMs?: number }
  | { type: "directory" }
  | { type: "symlink"; target: string };

/** The info of a MemorySandbox made without one (container "memory", tenant "test-fake"). */
function defaultInfo(): SandboxInfo {
  return {
    containerId: "memory",
    sessionId: "fake-session",
    tenant: "test-fake",
    image: "fake",
    runtime: "runc",
    workspaceMode: "copy",
    roots: [WORKSPACE_DIR],
    createdAt: new Date(0),
    expiresAt: new Date(0),
  };
}

/** The in-memory sandbox (see the module comment). */
export class MemorySandbox implements Sandbox {
  readonly nodes = new Map<string, MemoryNode>([
    ["/", { type: "directory" }],
    [WORKSPACE_DIR, { type: "directory" }],
  ]);
  /** Replaced by the backend when a spare is handed over to its claimer. */
  info: SandboxInfo;
  /** The workspace's records as copied in (path relative to /workspace → hash): changedPaths' baseline. */
  baseline: WorkspaceHashes = new Map();
  /** True once destroyed: every call then rejects SandboxNotRunningError. */
  destroyed = false;
  private readonly onDestroy: (() => void) | undefined;

  /** `info` fields override the defaults; `onDestroy` runs once, at the first destroy(). */
  constructor(info: Partial<SandboxInfo> = {}, onDestroy?: () => void) {
    this.info = { ...defaultInfo(), ...info };
    this.onDestroy = onDestroy;
  }

  /** Creates a file (and its parent directories); `path` is absolute or workspace-relative. */
  file(path: string, data: string | Buffer, mode = 0o644, mtimeMs?: number): this {
    const abs = posix.resolve(WORKSPACE_DIR, path);
    this.mkdir(posix.dirname(abs));
    this.nodes.set(abs, {
      type: "file",
      data: Buffer.from(data),
      mode,
      ...(mtimeMs === undefined ? {} : { mtimeMs }),
    });
    return this;
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

  /** Answers the argv commands of memory-exec.ts; anything else rejects InvalidArgumentError. */
  async exec(command: ExecCommand, options: ExecOptions = {}): Promise<ExecResult> {
    this.live();
    return runMemoryCommand(command, options);
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
    if (options.mode !== undefined && (options.mode & 0o6000) !== 0) {
      throw new InvalidArgumentError({
        field: "mode",
        problem: `must not set the set-user-ID or set-group-ID bit, got 0o${options.mode.toString(8)}; drop those bits.`,
      });
    }
    const real = await this.realpath(path);
    const old = this.nodes.get(real);
    this.file(real, data, options.mode ?? (old?.type === "file" ? old.mode : 0o644), Date.now());
  }

  /** The node's stat; a symlink is reported as itself (never followed), as the engine's lstat. */
  async stat(path: string, _options?: { signal?: AbortSignal }): Promise<FileStat | null> {
    this.live();
    const n = this.nodes.get(posix.resolve(WORKSPACE_DIR, path));
    if (!n) return null;
    if (n.type === "file")
      return { type: "file", size: n.data.length, mode: n.mode, mtimeMs: n.mtimeMs ?? 0 };
    return { type: n.type, size: 0, mode: n.type === "symlink" ? 0o777 : 0o755, mtimeMs: 0 };
  }

  async realpath(path: string, _options?: { signal?: AbortSignal }): Promise<string> {
    this.live();
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
  async exportWorkspace(_options?: { signal?: AbortSignal }): Promise<Readable> {
    this.live();
    const tar = pack();
    for (const [path, n] of this.nodes) {
      if (n.type === "file" && path.startsWith(`${WORKSPACE_DIR}/`)) {
        tar.entry({ name: path.slice(WORKSPACE_DIR.length + 1), mode: n.mode }, n.data);
      }
    }
    tar.finalize();
    return Readable.from(tar);
  }

  /** Paths added, modified or deleted since the workspace was copied in (`baseline`), sorted. */
  async changedPaths(_options?: { signal?: AbortSignal }): Promise<WorkspaceChange[]> {
    this.live();
    return diffHashes(this.baseline, this.hashes());
  }

  /** The workspace's records now, in workspace-copy.ts' format (sha256, `link:`, or `meta:` when large). */
  hashes(): WorkspaceHashes {
    const out: WorkspaceHashes = new Map();
    for (const [path, n] of this.nodes) {
      if (!path.startsWith(`${WORKSPACE_DIR}/`)) continue;
      const rel = path.slice(WORKSPACE_DIR.length + 1);
      if (n.type === "symlink") out.set(rel, `link:${n.target}`);
      else if (n.type === "file" && n.data.length > HASH_MAX_FILE_BYTES)
        out.set(rel, metaRecord(n.data.length, (n.mtimeMs ?? 0) / 1000));
      else if (n.type === "file") out.set(rel, createHash("sha256").update(n.data).digest("hex"));
    }
    return out;
  }

  /** Drops the tree; later calls reject SandboxNotRunningError. Safe to call twice. */
  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    this.nodes.clear();
    this.onDestroy?.();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.destroy();
  }

  /** Throws SandboxNotRunningError once destroyed. */
  protected live(): void {
    if (this.destroyed) throw new SandboxNotRunningError(this.info.containerId);
  }
}
