/**
 * Streaming tail truncation for command output: memory stays bounded (at most about
 * 2 × maxBytes + 2 bytes) however much is pushed, while totals are tracked exactly. Pi kept the
 * whole output in memory until it spilled; warden's bash tool writes the full output to a spill
 * file and keeps only this window.
 */
import { countNewlines } from "./lines.js";
import { tailResult } from "./tail.js";
import { resolveLimits, type TruncationOptions, type TruncationResult } from "./types.js";

/** Chunks merged into one once this many are held (keeps snapshots cheap for tiny chunks). */
const MAX_HELD_CHUNKS = 64;

/**
 * Accumulates a byte stream (already sanitised: valid UTF-8) and gives its tail truncation at any
 * time. Keeps the stream's last maxBytes + 1 bytes at least (plus at most one chunk), enough to
 * know whether the first kept line is whole.
 */
export class TailAccumulator {
  readonly maxLines: number;
  readonly maxBytes: number;
  #chunks: Buffer[] = [];
  #held = 0;
  #totalBytes = 0;
  #newlines = 0;
  #lastByte = -1;
  #currentLineBytes = 0;
  #previousLineBytes = 0;

  constructor(options: TruncationOptions = {}) {
    const { maxLines, maxBytes } = resolveLimits(options);
    this.maxLines = maxLines;
    this.maxBytes = maxBytes;
  }

  /** Appends a chunk. Only the last maxBytes + 1 bytes of a huge chunk are kept (copied). */
  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.#track(chunk);
    const keep = this.maxBytes + 1;
    const piece = chunk.length > keep ? Buffer.from(chunk.subarray(chunk.length - keep)) : chunk;
    this.#chunks.push(piece);
    this.#held += piece.length;
    while (this.#chunks.length > 1 && this.#held - this.#chunks[0]!.length >= keep) {
      this.#held -= this.#chunks.shift()!.length;
    }
    if (this.#chunks.length > MAX_HELD_CHUNKS) this.#chunks = [Buffer.concat(this.#chunks)];
  }

  /** Bytes pushed so far. */
  get totalBytes(): number {
    return this.#totalBytes;
  }

  /** Lines pushed so far ("\n" terminates a line; an unterminated last line counts). */
  get totalLines(): number {
    if (this.#totalBytes === 0) return 0;
    return this.#newlines + (this.#lastByte === 0x0a ? 0 : 1);
  }

  /** Size in bytes of the last line (without its newline), for Pi's "line is N KB" notice. */
  get lastLineBytes(): number {
    return this.#lastByte === 0x0a ? this.#previousLineBytes : this.#currentLineBytes;
  }

  /** Bytes currently held in memory (bounded by about 2 × maxBytes + 2). */
  get heldBytes(): number {
    return this.#held;
  }

  /** The tail truncation of everything pushed so far (Pi's truncateTail result). */
  snapshot(): TruncationResult {
    if (this.#chunks.length > 1) this.#chunks = [Buffer.concat(this.#chunks)];
    const window = this.#chunks[0] ?? Buffer.alloc(0);
    return tailResult(window, this.#totalBytes, this.totalLines, this.maxLines, this.maxBytes);
  }

  #track(chunk: Buffer): void {
    this.#totalBytes += chunk.length;
    this.#newlines += countNewlines(chunk);
    const lastNewline = chunk.lastIndexOf(0x0a);
    if (lastNewline === -1) {
      this.#currentLineBytes += chunk.length;
    } else {
      const beforeLast = lastNewline === 0 ? -1 : chunk.lastIndexOf(0x0a, lastNewline - 1);
      this.#previousLineBytes =
        beforeLast === -1 ? this.#currentLineBytes + lastNewline : lastNewline - beforeLast - 1;
      this.#currentLineBytes = chunk.length - lastNewline - 1;
    }
    this.#lastByte = chunk[chunk.length - 1]!;
  }
}
