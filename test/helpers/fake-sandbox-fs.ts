/**
 * An in-memory `Sandbox` for unit tests of the file tools: files, directories and symlinks in a map,
 * `realpath` following links like `realpath -m`, atomic-looking writes, and `exec` answered by a
 * test-supplied handler (argv in, stdout chunks and exit code out). No engine, no host files.
 */
import { posix } from "node:path";
import { Readable } from "node:stream";
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
} from "../../src/sandbox/types.js";

type Node = { type: "file"; data: Buffer } | { type: "directory" } | { type: "symlink"; target: string };

/** What an exec handler returns: stdout chunks (strings or bytes) and an exit code. */
export interface FakeExecReply {
  stdout?: (string | Buffer)[];
  stderr?: string;
  exitCode?: number;
}

export type FakeExecHandler = (argv: string[], options: ExecOptions) => FakeExecReply;

/** In-memory sandbox; `roots` default to ["/workspace"]. */
export class FakeSandboxFs implements Sandbox {
  readonly nodes = new Map<string, Node>([
    ["/", { type: "directory" }],
    ["/workspace", { type: "directory" }],
  ]);
  readonly info: SandboxInfo;
  /** Every argv run through exec, in order. */
  readonly execs: string[][] = [];
  /** Answers exec calls; the default fails with exit 127. */
  execHandler: FakeExecHandler = () => ({ exitCode: 127 });
  writes = 0;

  constructor(roots: string[] = ["/workspace"]) {
    this.info = {
      containerId: "fake",
      sessionId: "fake",
      tenant: "test-fake",
      image: "fake",
      runtime: "runc",
      workspaceMode: "copy",
      roots,
      createdAt: new Date(0),
      expiresAt: new Date(0),
    };
  }

  /** Creates a file (and its parent directories). */
  file(path: string, data: string | Buffer): this {
    this.#mkdirs(posix.dirname(path));
    this.nodes.set(path, { type: "file", data: Buffer.isBuffer(data) ? data : Buffer.from(data, "utf8") });
    return this;
  }

  /** Creates a symlink `path` -> `target`. */
  symlink(path: string, target: string): this {
    this.#mkdirs(posix.dirname(path));
    this.nodes.set(path, { type: "symlink", target });
    return this;
  }

  /** The bytes of a file, or undefined. */
  bytes(path: string): Buffer | undefined {
    const n = this.nodes.get(path);
    return n?.type === "file" ? n.data : undefined;
  }

  async exec(command: ExecCommand, options: ExecOptions = {}): Promise<ExecResult> {
    const argv = "argv" in command ? command.argv : ["bash", "-c", command.shell];
    this.execs.push(argv);
    const reply = this.execHandler(argv, options);
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
  }

  async readFile(path: string, range: ReadRange): Promise<ReadFileResult> {
    const real = await this.realpath(path);
    const n = this.nodes.get(real);
    if (n?.type !== "file") throw new NotFoundError(`No such file: ${path}`);
    if (range.kind !== "bytes") throw new Error("fake: only byte ranges");
    return { data: n.data.subarray(range.offset, range.offset + range.length), totalBytes: n.data.length };
  }

  async writeFile(path: string, data: Buffer): Promise<void> {
    const real = await this.realpath(path);
    this.#mkdirs(posix.dirname(real));
    this.nodes.set(real, { type: "file", data: Buffer.from(data) });
    this.writes++;
  }

  async stat(path: string): Promise<FileStat | null> {
    const n = this.nodes.get(posix.resolve("/workspace", path));
    if (!n) return null;
    const size = n.type === "file" ? n.data.length : 0;
    return { type: n.type, size, mode: 0o644, mtimeMs: 0 };
  }

  async realpath(path: string): Promise<string> {
    let parts = posix.resolve("/workspace", path).split("/").filter(Boolean);
    let out = "/";
    for (let hops = 0; parts.length > 0 && hops < 40; ) {
      const next = posix.join(out, parts.shift()!);
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

  async listDir(path: string): Promise<DirEntry[]> {
    const dir = await this.realpath(path);
    return [...this.nodes.entries()]
      .filter(([p]) => p !== dir && posix.dirname(p) === dir)
      .map(([p, n]) => ({ name: posix.basename(p), type: n.type }));
  }

  async exportWorkspace(): Promise<Readable> {
    return Readable.from([]);
  }

  async changedPaths(): Promise<[]> {
    return [];
  }

  async destroy(): Promise<void> {}

  async [Symbol.asyncDispose](): Promise<void> {}

  #mkdirs(dir: string): void {
    for (let d = dir; d !== "/" && !this.nodes.has(d); d = posix.dirname(d)) {
      this.nodes.set(d, { type: "directory" });
    }
  }
}
