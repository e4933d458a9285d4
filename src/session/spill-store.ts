/**
 * Spill files: the full output of a cut tool result, kept on the host in a private directory that
 * is separate from the sandbox's storage, so a full workspace cannot starve it (public fault 26).
 * The directory is 0700, each file 0600, and everything is removed on dispose (unlike Pi, whose temp
 * logs were world-readable and never deleted: earendil-works/pi#7521).
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
import { controllerId } from "../sandbox/labels.js";
import type { ReadFileResult, ReadRange } from "../sandbox/types.js";
import type { SpillStore, SpillWriter } from "../tools/types.js";
import { readHostFileRange } from "./host-file-range.js";
import { SPILL_DIR_PREFIX, SPILL_OWNER_FILE } from "./spill-sweep.js";

/** Default cap on one spill file: 1 GiB. Output past it is not kept (the file ends there). */
export const DEFAULT_SPILL_FILE_MAX_BYTES = 1024 * 1024 * 1024;
const SAFE_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** Options for createSpillStore. */
export interface SpillStoreOptions {
  /** Host directory under which the session's private spill directory is made. Default os.tmpdir(). */
  dir?: string;
  /** Session id, part of the directory name (letters, digits, `_.-`; at most 64). */
  sessionId: string;
  /** Cap on one spill file in bytes. Default 1 GiB. */
  maxFileBytes?: number;
  /**
   * Owner written to the directory's `.owner` file, in io.warden.controller form: `hostname:pid`
   * (default: this process), which `warden gc` sweeps once that process is gone (spill-sweep.ts).
   */
  owner?: string;
}

/** The host-directory SpillStore; `dir` is created on the first `create` call. */
export class HostSpillStore implements SpillStore {
  readonly #parent: string;
  readonly #sessionId: string;
  readonly #maxFileBytes: number;
  readonly #owner: string;
  readonly #files = new Set<string>();
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
    this.#maxFileBytes = options.maxFileBytes ?? DEFAULT_SPILL_FILE_MAX_BYTES;
    this.#owner = options.owner ?? controllerId();
  }

  /** The session's private directory, or undefined before the first spill file. */
  get dir(): string | undefined {
    return this.#dir;
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
    const path = join(this.#dir, `${prefix}-${randomUUID().slice(0, 8)}.log`);
    const fd = openSync(path, "wx", 0o600);
    this.#files.add(path);
    return new HostSpillWriter(path, fd, this.#maxFileBytes, () => this.#files.delete(path));
  }

  /** True when `path` (resolved on the host) is a live spill file of this store. */
  owns(path: string): boolean {
    return this.#files.has(resolve(path));
  }

  /** Reads a range of one of this store's files (Sandbox.readFile's contract). Rejects NotFoundError otherwise. */
  async read(path: string, range: ReadRange): Promise<ReadFileResult> {
    if (!this.owns(path)) throw new NotFoundError(`Not a spill file of this session: ${path}`);
    return readHostFileRange(resolve(path), range);
  }

  /** Removes the private directory and every file in it. Idempotent. */
  async dispose(): Promise<void> {
    this.#disposed = true;
    this.#files.clear();
    if (this.#dir) rmSync(this.#dir, { recursive: true, force: true });
    this.#dir = undefined;
  }
}

/** Writes synchronously (bounded memory whatever the producer's pace); never throws from write. */
class HostSpillWriter implements SpillWriter {
  #fd: number | undefined;
  #written = 0;
  /** The first write error (e.g. ENOSPC on the host); later writes are dropped. */
  error: Error | undefined;

  constructor(
    readonly path: string,
    fd: number,
    readonly maxBytes: number,
    readonly forget: () => void,
  ) {
    this.#fd = fd;
  }

  /** Bytes written so far. */
  get bytesWritten(): number {
    return this.#written;
  }

  write(chunk: Buffer): void {
    if (this.#fd === undefined || this.error) return;
    const room = this.maxBytes - this.#written;
    if (room <= 0) return;
    const data = chunk.length > room ? chunk.subarray(0, room) : chunk;
    try {
      let done = 0;
      while (done < data.length) done += writeSync(this.#fd, data, done, data.length - done);
      this.#written += done;
    } catch (err) {
      this.error = err instanceof Error ? err : new Error(String(err));
    }
  }

  async close(): Promise<void> {
    if (this.#fd === undefined) return;
    const fd = this.#fd;
    this.#fd = undefined;
    closeSync(fd);
  }

  async discard(): Promise<void> {
    await this.close();
    this.forget();
    try {
      unlinkSync(this.path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
  }
}

/** Creates the SpillStore of one session (see HostSpillStore). */
export function createSpillStore(options: SpillStoreOptions): HostSpillStore {
  return new HostSpillStore(options);
}
