/**
 * Spill files: the full output of a cut tool result, kept on the host in a private directory that
 * is separate from the sandbox's storage, so a full workspace cannot starve it (public fault 26).
 * The directory is 0700, each file 0600, and everything is removed on dispose (unlike Pi, whose temp
 * logs were world-readable and never deleted: earendil-works/pi#7521). The bytes kept are capped per
 * session and, in `warden serve`, per tenant (spill-budget.ts), so output cannot fill the host disk.
 */
import { randomUUID } from "node:crypto";
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { InvalidArgumentError, NotFoundError } from "../errors.js";
import type { ReadFileResult, ReadRange } from "../sandbox/index.js";
import { controllerId } from "../sandbox/index.js";
import type { SpillStore, SpillSummary, SpillWriter } from "../tools/index.js";
import { spillHandle } from "../tools/index.js";
import { readHostFileRange } from "./host-file-range.js";
import { DEFAULT_SPILL_SESSION_MAX_BYTES, SpillBudget, takeSpillBytes } from "./spill-budget.js";
import { SPILL_DIR_PREFIX, SPILL_OWNER_FILE } from "./spill-sweep.js";

const SAFE_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** Options for createSpillStore. */
export interface SpillStoreOptions {
  /** Host directory under which the session's private spill directory is made. Default os.tmpdir(). */
  dir?: string;
  /** Session id, part of the directory name (letters, digits, `_.-`; at most 64). */
  sessionId: string;
  /** Cap on the bytes of all the session's spill files together. Default 256 MiB; 0 keeps none. */
  maxBytes?: number;
  /** How the caller raises `maxBytes`, named in a cut result's notice. Default "the session option spillMaxBytes". */
  maxBytesHint?: string;
  /** A budget shared with other sessions (`warden serve`: the tenant's quotas.spillBytes). */
  shared?: SpillBudget;
  /**
   * Owner written to the directory's `.owner` file, in io.warden.controller form: `hostname:pid`
   * (default: this process), which `warden gc` sweeps once that process is gone (spill-sweep.ts).
   */
  owner?: string;
}

/**
 * The host-directory SpillStore; `dir` is created on the first `create` call. Files are known to
 * the model by handle (`/spill/<prefix>-<random>.log`); `read` resolves a handle by exact lookup
 * in this store's own table, so traversal, host paths and other sessions' handles never resolve.
 */
export class HostSpillStore implements SpillStore {
  readonly #parent: string;
  readonly #sessionId: string;
  readonly #budgets: SpillBudget[];
  readonly #owner: string;
  /** Live files by handle. */
  readonly #files = new Map<string, HostSpillWriter>();
  #dir: string | undefined;
  #disposed = false;

  constructor(options: SpillStoreOptions) {
    if (!SAFE_NAME.test(options.sessionId)) {
      throw new InvalidArgumentError(
        `Spill store sessionId must be 1-64 letters, digits, '_', '.' or '-', got '${options.sessionId}'.`,
      );
    }
    this.#parent = resolve(options.dir ?? tmpdir());
    this.#sessionId = options.sessionId;
    const own = new SpillBudget(
      "session",
      options.maxBytes ?? DEFAULT_SPILL_SESSION_MAX_BYTES,
      options.maxBytesHint ?? "the session option spillMaxBytes",
    );
    this.#budgets = options.shared ? [own, options.shared] : [own];
    this.#owner = options.owner ?? controllerId();
  }

  /** The session's private directory, or undefined before the first spill file. */
  get dir(): string | undefined {
    return this.#dir;
  }

  /** Bytes the session's live spill files hold together. */
  get usedBytes(): number {
    return this.#budgets[0]?.usedBytes ?? 0;
  }

  /** Creates an empty 0600 file `<prefix>-<random>.log` in the private 0700 directory. */
  async create(prefix: string): Promise<SpillWriter> {
    if (this.#disposed) throw new InvalidArgumentError("Spill store is disposed; create a new session.");
    if (!SAFE_NAME.test(prefix)) {
      throw new InvalidArgumentError(`Spill file prefix must be 1-64 letters, digits, '_', '.' or '-'.`);
    }
    if (!this.#dir) {
      mkdirSync(this.#parent, { recursive: true });
      const dir = mkdtempSync(join(this.#parent, `${SPILL_DIR_PREFIX}${this.#sessionId}-`));
      writeFileSync(join(dir, SPILL_OWNER_FILE), `${this.#owner}\n`, { mode: 0o600 });
      this.#dir = dir;
    }
    const name = `${prefix}-${randomUUID().slice(0, 8)}.log`;
    const hostPath = join(this.#dir, name);
    const fd = openSync(hostPath, "wx", 0o600);
    const handle = spillHandle(name);
    const writer = new HostSpillWriter(handle, hostPath, fd, this.#budgets, () => this.#files.delete(handle));
    this.#files.set(handle, writer);
    return writer;
  }

  /** True when `handle` is exactly the handle of a live file of this store. */
  owns(handle: string): boolean {
    return this.#files.has(handle);
  }

  /** The host path behind `handle` (for operators and tests; never shown to the model), or undefined. */
  hostPathOf(handle: string): string | undefined {
    return this.#files.get(handle)?.hostPath;
  }

  /** Reads a range of the file `handle` names (Sandbox.readFile's contract). Rejects NotFoundError otherwise. */
  async read(handle: string, range: ReadRange): Promise<ReadFileResult> {
    const file = this.#files.get(handle);
    if (!file) {
      throw new NotFoundError(
        `Spill file not found: ${handle}. A spill handle is valid only in the session whose result named it, until that session closes.`,
      );
    }
    return readHostFileRange(file.hostPath, range);
  }

  /** Removes the private directory and every file in it, giving their bytes back. Idempotent. */
  async dispose(): Promise<void> {
    this.#disposed = true;
    for (const file of [...this.#files.values()]) file.release();
    this.#files.clear();
    if (this.#dir) rmSync(this.#dir, { recursive: true, force: true });
    this.#dir = undefined;
  }
}

/**
 * Writes synchronously (bounded memory whatever the producer's pace); never throws from write.
 * Each chunk takes its bytes from every budget first; what they have no room for is dropped
 * (the file keeps the output's first bytes) and only counted.
 */
class HostSpillWriter implements SpillWriter {
  #fd: number | undefined;
  #kept = 0;
  #total = 0;
  #cappedBy: SpillBudget | undefined;
  #released = false;
  /** The first write error (e.g. ENOSPC on the host); later writes are dropped. */
  error: Error | undefined;

  constructor(
    readonly handle: string,
    readonly hostPath: string,
    fd: number,
    private readonly budgets: readonly SpillBudget[],
    private readonly forget: () => void,
  ) {
    this.#fd = fd;
  }

  write(chunk: Buffer): void {
    this.#total += chunk.length;
    if (this.#fd === undefined || this.error || this.#cappedBy) return;
    const { grantedBytes, limitedBy } = takeSpillBytes(this.budgets, chunk.length);
    this.#cappedBy = limitedBy;
    const data = chunk.subarray(0, grantedBytes);
    let done = 0;
    try {
      while (done < data.length) done += writeSync(this.#fd, data, done, data.length - done);
    } catch (err) {
      this.error = err instanceof Error ? err : new Error(String(err));
    }
    this.#kept += done;
    for (const budget of this.budgets) budget.give(grantedBytes - done);
  }

  summary(): SpillSummary {
    const summary: SpillSummary = { handle: this.handle, keptBytes: this.#kept, totalBytes: this.#total };
    if (this.error) summary.error = this.error.message;
    else if (this.#cappedBy) {
      const { scope, limitBytes, raiseHint } = this.#cappedBy;
      summary.cappedBy = { scope, limitBytes, raiseHint };
    }
    return summary;
  }

  async close(): Promise<void> {
    if (this.#fd === undefined) return;
    const fd = this.#fd;
    this.#fd = undefined;
    closeSync(fd);
  }

  /**
   * Gives the file's bytes back to its budgets (once) and closes it: a command still running when
   * its session closes can neither take more bytes nor keep the unlinked file growing on the disk.
   */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
    for (const budget of this.budgets) budget.give(this.#kept);
  }

  async discard(): Promise<void> {
    await this.close();
    this.forget();
    this.release();
    try {
      unlinkSync(this.hostPath);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
  }
}

/** Creates the SpillStore of one session (see HostSpillStore). */
export function createSpillStore(options: SpillStoreOptions): HostSpillStore {
  return new HostSpillStore(options);
}
