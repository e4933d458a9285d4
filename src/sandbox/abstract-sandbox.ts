/**
 * The part of a Sandbox that is its SandboxIO: commands and file operations, relative paths
 * resolved against /workspace (io-contract.ts's containerPath), and the change list (the hash
 * script run through the same IO). `DockerSandbox` and `KubernetesSandbox` extend it with what
 * their backend does itself (workspace export, removal). No Docker here: the Kubernetes sandbox
 * builds on it.
 */
import type { Readable } from "node:stream";
import type { SandboxIO } from "./io.js";
import { containerPath, containerWritePath } from "./io-contract.js";
import { listingEntries, sortListing } from "./listing-sort.js";
import type {
  DirEntry,
  ExecCommand,
  ExecOptions,
  ExecResult,
  FileStat,
  ListingView,
  ProcessIO,
  ReadFileResult,
  ReadRange,
  Sandbox,
  SandboxInfo,
  SortedListing,
  WorkspaceChange,
} from "./types.js";
import { hashWorkspace } from "./workspace-changes.js";
import type { WorkspaceHashes } from "./workspace-copy.js";
import { diffHashes } from "./workspace-hashes.js";

type Opts = { signal?: AbortSignal };

/**
 * The base of `DockerSandbox` and `KubernetesSandbox`: a Sandbox whose calls go through one
 * `SandboxIO` (io.ts), chosen when it is made and kept. Subclasses add export and removal.
 */
export abstract class AbstractSandbox implements Sandbox {
  abstract readonly info: SandboxInfo;

  /**
   * `io` carries every call; `baseline` is the workspace's hashes when it was set up (what
   * changedPaths compares with).
   */
  constructor(
    protected readonly io: SandboxIO,
    private readonly baseline: WorkspaceHashes,
  ) {}

  get processIO(): ProcessIO | undefined {
    return this.io.procs;
  }

  exec(command: ExecCommand, options?: ExecOptions): Promise<ExecResult> {
    return this.io.exec(command, options);
  }

  readFile(path: string, range: ReadRange, options?: Opts): Promise<ReadFileResult> {
    return this.io.readFile(containerPath(path), range, options);
  }

  writeFile(path: string, data: Buffer, options?: { mode?: number; signal?: AbortSignal }): Promise<void> {
    return this.io.writeFile(containerWritePath(path), data, options);
  }

  stat(path: string, options?: Opts): Promise<FileStat | null> {
    return this.io.stat(containerPath(path), options);
  }

  realpath(path: string, options?: Opts): Promise<string> {
    return this.io.realpath(containerPath(path), options);
  }

  async listDir(path: string, options?: Opts): Promise<DirEntry[]> {
    return listingEntries(await this.io.listDirRaw(containerPath(path), options));
  }

  async listDirSorted(path: string, view: ListingView, options?: Opts): Promise<SortedListing> {
    return sortListing(await this.io.listDirRaw(containerPath(path), options), view, options?.signal);
  }

  /** The workspace's files added, modified or deleted since the baseline, sorted by path. */
  async changedPaths(options?: Opts): Promise<WorkspaceChange[]> {
    return diffHashes(this.baseline, await hashWorkspace((c, o) => this.exec(c, o), options?.signal));
  }

  abstract exportWorkspace(options?: Opts): Promise<Readable>;
  abstract destroy(): Promise<void>;

  [Symbol.asyncDispose](): Promise<void> {
    return this.destroy();
  }
}
