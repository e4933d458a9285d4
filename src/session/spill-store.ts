/**
 * Spill files: the full output of a cut tool result, kept on the host in a private directory that
 * is separate from the sandbox's storage, so a full workspace cannot starve it (public fault 26).
 * The directory is 0700, each file 0600, and everything is removed on dispose (unlike Pi, whose temp
 * logs were world-readable and never deleted: earendil-works/pi#7521). The bytes kept are capped per
 * session and, in `warden serve`, per tenant (spill-budget.ts), so output cannot fill the host disk.
 */
import { randomUUID } from "node:crypto";
import { closeSync, ftruncateSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { unlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { InvalidArgumentError, NotFoundError } from "../errors.js";
import type { ReadFileResult, ReadRange } from "../sandbox/index.js";
import { controllerId } from "../sandbox/index.js";
import type { SpillStore, SpillSummary, SpillWriter } from "../tools/index.js";
import { spillHandle } from "../tools/index.js";
import { readHostFileRange } from "./host-file-range.js";
import { DEFAULT_SPILL_SESSION_MAX_BYTES, SpillBudget, takeSpillBytes } from "./spill-budget.js";
import { openNew, remainder, writev } from "./spill-io.js";
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

/** A live spill file in a store's table: this process's writer, or a file adopted (HostSpillStore.adopt). */
interface SpillEntry {
  readonly hostPath: string;
  /** Resolves once every write queued so far reached the file. */
  flush(): Promise<void>;
  /** Gives the file's bytes back to its budgets (once). */
  release(): void;
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
  /** Live files by handle: this process's writers, and files adopted from a previous process. */
  readonly #files = new Map<string, SpillEntry>();
  #dir: string | undefined;
  /** Adopted directories besides `#dir` (removed on dispose too). */
  readonly #moreDirs: string[] = [];
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

  /**
   * A writer for a new 0600 file `<prefix>-<random>.log` in the private 0700 directory. The file is
   * made only when it is needed (HostSpillWriter: past SPILL_HOLD_BYTES, or when kept), off the
   * event loop; the directory is made here, once per session.
   */
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
    let name: string;
    do name = `${prefix}-${randomUUID().slice(0, 8)}.log`;
    while (this.#files.has(spillHandle(name)));
    const hostPath = join(this.#dir, name);
    const handle = spillHandle(name);
    const writer = new HostSpillWriter(handle, hostPath, this.#budgets, () => this.#files.delete(handle));
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
    await file.flush();
    return readHostFileRange(file.hostPath, range);
  }

  /**
   * Takes over `dir`, this session's spill directory left by a previous controller process whose
   * session this one adopted (spill-adopt.ts): its `files` (names and sizes) become live handles
   * again, their bytes taken from the budgets, later files go into it, and dispose removes it.
   */
  adopt(dir: string, files: ReadonlyArray<{ name: string; bytes: number }>): void {
    if (this.#dir === undefined) this.#dir = dir;
    else this.#moreDirs.push(dir);
    const budgets = this.#budgets;
    for (const { name, bytes } of files) {
      for (const budget of budgets) budget.take(bytes);
      let released = false;
      const release = () => {
        if (!released) for (const budget of budgets) budget.give(bytes);
        released = true;
      };
      this.#files.set(spillHandle(name), { hostPath: join(dir, name), flush: async () => {}, release });
    }
  }

  /** Removes the private directory and every file in it, giving their bytes back. Idempotent. */
  async dispose(): Promise<void> {
    this.#disposed = true;
    const files = [...this.#files.values()];
    for (const file of files) file.release();
    this.#files.clear();
    // A file still being made (or written) finishes that one operation first: made during the
    // directory's removal, it would be left behind, and its directory with it.
    await Promise.all(files.map((file) => file.flush()));
    for (const dir of [this.#dir, ...this.#moreDirs.splice(0)])
      if (dir) rmSync(dir, { recursive: true, force: true });
    this.#dir = undefined;
  }
}

/**
 * Bytes one spill file may have waiting for its background writes (on libuv's thread pool, off the
 * event loop: a 64 MiB flood's writeSync calls took ~12 ms of the server's event loop per MiB, and
 * a disk busy with dirty pages blocks each of them further). At the bound, `write` returns a
 * promise and the producer stops reading output until it resolves (the exec paths pause the
 * stream they read, so the command's pipe fills and the command waits), so memory stays bounded
 * however fast the command prints and however slow the disk is, and no write ever blocks the loop.
 */
export const SPILL_QUEUE_MAX_BYTES = 8 * 1024 * 1024;

/**
 * Output a spill file holds in memory before the file is made. Most commands print less than this
 * and are not cut, so their file is never made: no create and unlink per call, which, run on the
 * event loop while another tenant's flood kept the disk busy, held it up to 12 ms (noisy-neighbour
 * bench, 2026-12-03). A cut output is kept, so its file is made then (`close`).
 */
export const SPILL_HOLD_BYTES = 64 * 1024;

/**
 * Writes in the background with a bounded queue (SPILL_QUEUE_MAX_BYTES); never throws from write.
 * Each chunk takes its bytes from every budget first and gets its file offset at once; what the
 * budgets have no room for is dropped (the file keeps the output's first bytes) and only counted.
 * The file is made by the first background write, once SPILL_HOLD_BYTES are queued or when `flush`
 * or `close` needs it; `discard` before that touches no disk. A failure to make it is a write error
 * (summary().error). `close` waits for the queued writes; the file descriptor is closed only after them.
 */
class HostSpillWriter implements SpillWriter {
  /** The open file; undefined before it is made, and after close. */
  #fd: number | undefined;
  /** Closed (or released with nothing in flight): writes are dropped and the file is never made. */
  #closed = false;
  /** The file was made (and so must be unlinked by discard). */
  #made = false;
  /** Bytes granted so far = the file offset of the next chunk. */
  #offset = 0;
  #total = 0;
  #cappedBy: SpillBudget | undefined;
  #released = false;
  /** Offset where the first failed write began: the file keeps the bytes before it. */
  #errorAt: number | undefined;
  /** Chunks waiting for the background write; #queuedBytes counts them and the batch being written. */
  #queue: QueuedChunk[] = [];
  #queuedBytes = 0;
  #pump: Promise<void> | undefined;
  /** What write returned at the bound: resolved once the queue is under it again (or the pump ends). */
  #room: { promise: Promise<void>; resolve: () => void } | undefined;
  /** close() or release() asked to close while a background write ran: the pump closes the fd. */
  #closeAfterPump = false;
  /** The first write error (e.g. ENOSPC on the host); later writes are dropped. */
  error: Error | undefined;

  constructor(
    readonly handle: string,
    readonly hostPath: string,
    private readonly budgets: readonly SpillBudget[],
    private readonly forget: () => void,
  ) {}

  write(chunk: Buffer): Promise<void> | undefined {
    this.#total += chunk.length;
    if (this.#closed || this.#closeAfterPump || this.error || this.#cappedBy) return undefined;
    const { grantedBytes, limitedBy } = takeSpillBytes(this.budgets, chunk.length);
    this.#cappedBy = limitedBy;
    if (grantedBytes === 0) return undefined;
    this.#queue.push({ data: chunk.subarray(0, grantedBytes), offset: this.#offset });
    this.#offset += grantedBytes;
    this.#queuedBytes += grantedBytes;
    if (this.#fd !== undefined || this.#queuedBytes >= SPILL_HOLD_BYTES) this.#pump ??= this.#drain();
    if (this.#queuedBytes < SPILL_QUEUE_MAX_BYTES) return undefined;
    if (!this.#room) {
      let resolve = () => {};
      const promise = new Promise<void>((r) => {
        resolve = r;
      });
      this.#room = { promise, resolve };
    }
    return this.#room.promise;
  }

  /** Bytes the file keeps: those granted, less any from the first failed write on. */
  get #kept(): number {
    return this.#errorAt ?? this.#offset;
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

  /** Resolves once the file is made and every queued write has reached it (or failed: see summary().error). */
  async flush(): Promise<void> {
    if (this.#fd === undefined && !this.#closed && !this.error) this.#pump ??= this.#drain();
    while (this.#pump) await this.#pump;
  }

  async close(): Promise<void> {
    await this.flush();
    this.#closeFd();
  }

  /**
   * Gives the file's bytes back to its budgets (once) and closes it: a command still running when
   * its session closes can neither take more bytes nor keep the unlinked file growing on the disk.
   */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    if (this.#pump) this.#closeAfterPump = true;
    else this.#closeFd();
    for (const budget of this.budgets) budget.give(this.#kept);
  }

  async discard(): Promise<void> {
    if (this.#made || this.#pump !== undefined) await this.close();
    else this.#drop();
    this.forget();
    this.release();
    // Only a file this writer made (an open that failed, e.g. EEXIST, made none to remove).
    if (this.#made)
      await unlink(this.hostPath).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== "ENOENT") throw err;
      });
  }

  /** Closes a writer whose file was never made: its held output is let go. */
  #drop(): void {
    this.#queue = [];
    this.#queuedBytes = 0;
    this.#closeFd();
    this.#roomAgain();
  }

  #closeFd(): void {
    this.#closed = true;
    if (this.#fd === undefined) return;
    const fd = this.#fd;
    this.#fd = undefined;
    if (this.#errorAt !== undefined) {
      try {
        ftruncateSync(fd, this.#errorAt); // a later positional write may have landed past the failure
      } catch {}
    }
    closeSync(fd);
  }

  /** Makes the file if it is not made yet, then writes the queue in the background, in order, until it is empty. */
  async #drain(): Promise<void> {
    if (this.#fd === undefined && !this.#closed)
      try {
        this.#fd = await openNew(this.hostPath);
        this.#made = true;
      } catch (err) {
        this.#failed(err, 0);
      }
    // Released (its session closed, its directory being removed): what is queued is let go.
    while (this.#queue.length > 0 && this.#fd !== undefined && !this.#released) {
      const batch = this.#queue;
      this.#queue = [];
      const start = batch[0]?.offset ?? 0; // queued chunks are adjacent: one positional writev run
      const data = batch.map((c) => c.data);
      const bytes = data.reduce((n, c) => n + c.length, 0);
      let done = 0;
      try {
        while (done < bytes && this.#fd !== undefined)
          done += await writev(this.#fd, remainder(data, done), start + done);
      } catch (err) {
        this.#failed(err, start + done);
      }
      this.#queuedBytes -= bytes;
      if (this.#queuedBytes < SPILL_QUEUE_MAX_BYTES) this.#roomAgain();
    }
    this.#queue = [];
    this.#queuedBytes = 0;
    this.#pump = undefined;
    this.#roomAgain();
    if (this.#closeAfterPump) this.#closeFd();
  }

  /** Resolves the promise write returned at the bound: the producer may read on. */
  #roomAgain(): void {
    this.#room?.resolve();
    this.#room = undefined;
  }

  /** Records the first failure: the file keeps the bytes before `at`; the rest go back to the budgets. */
  #failed(err: unknown, at: number): void {
    this.error ??= err instanceof Error ? err : new Error(String(err));
    if (this.#errorAt !== undefined && this.#errorAt <= at) return;
    const lost = (this.#errorAt ?? this.#offset) - at;
    this.#errorAt = at;
    if (!this.#released) for (const budget of this.budgets) budget.give(lost);
  }
}

/** A chunk waiting for its background write, at its file offset. */
interface QueuedChunk {
  data: Buffer;
  offset: number;
}

/** Creates the SpillStore of one session (see HostSpillStore). */
export function createSpillStore(options: SpillStoreOptions): HostSpillStore {
  return new HostSpillStore(options);
}
