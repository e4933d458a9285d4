/**
 * FakeSandbox: a `Sandbox` backed by a host temp directory, for unit tests of tools without an
 * engine. /workspace maps to the temp directory; file operations use the host filesystem; `exec`
 * is scripted by the test (no process runs). Not hardened, never used outside tests.
 */
import { lstat, mkdir, mkdtemp, readdir, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, posix, relative, sep } from "node:path";
import type { Readable } from "node:stream";
import { NotFoundError } from "../../src/errors.js";
import type {
  DirEntry,
  ExecCommand,
  ExecOptions,
  ExecResult,
  FileStat,
  ReadFileResult,
  ReadRange,
  Sandbox,
  SandboxInfo,
  WorkspaceChange,
} from "../../src/sandbox/types.js";
import { WORKSPACE_DIR } from "../../src/sandbox/types.js";
import { readHostFileRange } from "../../src/session/host-file-range.js";

/** What a scripted exec does: the test pushes output through `opts` and returns the result. */
export type ExecScript = (command: ExecCommand, opts: ExecOptions) => Promise<ExecResult>;

/** An ExecScript that emits `chunks` on stdout (strings or Buffers) and returns `result`. */
export function emitting(chunks: (string | Buffer)[], result: Partial<ExecResult> = {}): ExecScript {
  return async (_command, opts) => {
    for (const chunk of chunks) opts.onStdout?.(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
    return { exitCode: 0, timedOut: false, aborted: false, durationMs: 1, ...result };
  };
}

function typeOf(st: {
  isFile(): boolean;
  isDirectory(): boolean;
  isSymbolicLink(): boolean;
}): FileStat["type"] {
  if (st.isSymbolicLink()) return "symlink";
  if (st.isDirectory()) return "directory";
  return st.isFile() ? "file" : "other";
}

export class FakeSandbox implements Sandbox {
  readonly info: SandboxInfo;
  /** The commands exec was called with, in order. */
  readonly commands: ExecCommand[] = [];
  /** Replace to script exec; the default emits nothing and exits 0. */
  execScript: ExecScript = emitting([]);

  private constructor(readonly hostRoot: string) {
    const now = new Date();
    this.info = {
      containerId: "fake",
      sessionId: "fake-session",
      tenant: "test-fake",
      image: "none",
      runtime: "runc",
      workspaceMode: "copy",
      roots: [WORKSPACE_DIR],
      createdAt: now,
      expiresAt: now,
    };
  }

  /** A fake sandbox over a fresh temp directory, with `files` (workspace-relative path -> content). */
  static async create(files: Record<string, string | Buffer> = {}): Promise<FakeSandbox> {
    const root = await realpath(await mkdtemp(join(tmpdir(), "warden-fake-")));
    const sandbox = new FakeSandbox(root);
    for (const [path, content] of Object.entries(files)) await sandbox.put(path, content);
    return sandbox;
  }

  /** Writes a workspace file on the host side (test setup). */
  async put(path: string, content: string | Buffer): Promise<void> {
    const host = this.toHost(posix.resolve(WORKSPACE_DIR, path));
    await mkdir(dirname(host), { recursive: true });
    await writeFile(host, content);
  }

  /** Host path for a container path: /workspace/... maps into the temp dir; anything else stays. */
  toHost(path: string): string {
    const p = posix.resolve(WORKSPACE_DIR, path);
    if (p === WORKSPACE_DIR) return this.hostRoot;
    if (p.startsWith(`${WORKSPACE_DIR}/`)) return join(this.hostRoot, p.slice(WORKSPACE_DIR.length + 1));
    return p;
  }

  /** Container path for a host path inside the temp dir; other host paths are returned unchanged. */
  toContainer(host: string): string {
    const rel = relative(this.hostRoot, host);
    if (rel === "") return WORKSPACE_DIR;
    if (rel.startsWith("..")) return host;
    return posix.join(WORKSPACE_DIR, rel.split(sep).join("/"));
  }

  async exec(command: ExecCommand, options: ExecOptions = {}): Promise<ExecResult> {
    this.commands.push(command);
    return this.execScript(command, options);
  }

  async readFile(path: string, range: ReadRange): Promise<ReadFileResult> {
    try {
      return await readHostFileRange(this.toHost(path), range);
    } catch (err) {
      if (err instanceof NotFoundError) throw new NotFoundError(`File not found: ${path}`);
      throw err;
    }
  }

  async writeFile(path: string, data: Buffer): Promise<void> {
    await this.put(path, data);
  }

  async stat(path: string): Promise<FileStat | null> {
    try {
      const st = await lstat(this.toHost(path));
      return { type: typeOf(st), size: st.size, mode: st.mode & 0o7777, mtimeMs: st.mtimeMs };
    } catch {
      return null;
    }
  }

  async realpath(path: string): Promise<string> {
    const host = this.toHost(path);
    let existing = host;
    let rest = "";
    for (;;) {
      try {
        const real = await realpath(existing);
        return this.toContainer(rest ? join(real, rest) : real);
      } catch {
        const parent = dirname(existing);
        if (parent === existing) return path;
        rest = rest ? join(existing.slice(parent.length + 1), rest) : existing.slice(parent.length + 1);
        existing = parent;
      }
    }
  }

  async listDir(path: string): Promise<DirEntry[]> {
    const entries = await readdir(this.toHost(path), { withFileTypes: true }).catch(() => {
      throw new NotFoundError(`Directory not found: ${path}`);
    });
    return entries.map((e) => ({ name: e.name, type: typeOf(e) }));
  }

  async exportWorkspace(): Promise<Readable> {
    throw new Error("FakeSandbox.exportWorkspace is not implemented");
  }

  async changedPaths(): Promise<WorkspaceChange[]> {
    return [];
  }

  async destroy(): Promise<void> {
    await rm(this.hostRoot, { recursive: true, force: true });
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.destroy();
  }
}
