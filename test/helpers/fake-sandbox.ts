/**
 * FakeSandbox: the one `Sandbox` stand-in of the unit tests, a MemorySandbox (src/sandbox/memory:
 * the in-memory tree, realpath, byte and line reads, listings, the workspace's tar) whose `exec`
 * the test scripts (no process runs) and whose `changedPaths` answers a fixed list. Its destroy
 * keeps the tree, so a test may look at the files after its session closed. Never used outside tests.
 */
import { MemorySandbox } from "../../src/sandbox/memory/index.js";
import type {
  ExecCommand,
  ExecOptions,
  ExecResult,
  SandboxInfo,
  WorkspaceChange,
} from "../../src/sandbox/types.js";

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
export class FakeSandbox extends MemorySandbox {
  /** The commands exec was called with, in order. */
  readonly commands: ExecCommand[] = [];
  /** Replace to script exec; the default emits nothing and exits 0. */
  execScript: ExecScript = emitting([]);
  /** What changedPaths answers. */
  changes: WorkspaceChange[];
  /** How many writeFile calls were made. */
  writes = 0;

  constructor(options: FakeSandboxOptions = {}) {
    super({ containerId: "fake", ...options.info });
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

  /** Writes a workspace file (test setup). */
  async put(path: string, content: string | Buffer): Promise<void> {
    this.file(path, content);
  }

  /** Records the command, then answers it with `execScript` (GET /workspace's measuring command built in). */
  override async exec(command: ExecCommand, options: ExecOptions = {}): Promise<ExecResult> {
    this.commands.push(command);
    // GET /workspace's measuring command (src/server/http/workspace-download.ts): the files' total.
    if (argvOf(command)[2]?.startsWith("du -sb .")) {
      let total = 0;
      for (const n of this.nodes.values()) if (n.type === "file") total += n.data.length;
      return replying(() => ({ stdout: [`${total}\n`] }))(command, options);
    }
    return this.execScript(command, options);
  }

  override async writeFile(
    path: string,
    data: Buffer,
    options: { mode?: number; signal?: AbortSignal } = {},
  ): Promise<void> {
    await super.writeFile(path, data, options);
    this.writes++;
  }

  override async changedPaths(): Promise<WorkspaceChange[]> {
    return this.changes;
  }

  /** Keeps the tree (see the module comment). */
  override async destroy(): Promise<void> {}

  override async [Symbol.asyncDispose](): Promise<void> {}
}
