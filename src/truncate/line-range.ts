/**
 * Selecting a line range from a byte stream, chunk by chunk, without holding more than the
 * selection: the pure core of `SpillStore.read` (and of any host-side `ReadRange` reader).
 * Lines are 1-based and "\n"-terminated; the selection keeps each line's newline.
 */
import { countNewlines } from "./lines.js";

/** A line range as in Sandbox.readFile's ReadRange `{kind: "lines"}`. */
export interface LineRangeSpec {
  /** First line to select, 1-based. */
  startLine: number;
  /** Number of lines to select. */
  maxLines: number;
  /** Cap on the selected bytes; the selection may end inside a line (or a character) at the cap. */
  maxBytes: number;
}

/** Feeds chunks in order; `finish` gives the selected bytes and the stream's line count. */
export class LineRangeCollector {
  readonly #range: LineRangeSpec;
  readonly #parts: Buffer[] = [];
  #selectedBytes = 0;
  #newlines = 0;
  #totalBytes = 0;
  #lastByte = -1;
  #selectionDone = false;

  constructor(range: LineRangeSpec) {
    if (!(range.startLine >= 1) || !(range.maxLines >= 0) || !(range.maxBytes >= 0)) {
      throw new RangeError(
        `invalid line range: startLine must be >= 1, maxLines and maxBytes >= 0 (got ${JSON.stringify(range)})`,
      );
    }
    this.#range = range;
  }

  /** True once the selection is complete (later chunks only count lines). */
  get selectionDone(): boolean {
    return this.#selectionDone;
  }

  /** Consumes the next chunk of the stream. */
  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    if (!this.#selectionDone) this.#select(chunk);
    this.#newlines += countNewlines(chunk);
    this.#totalBytes += chunk.length;
    this.#lastByte = chunk[chunk.length - 1]!;
  }

  /** The selected bytes and the total line count of everything pushed. */
  finish(): { data: Buffer; totalLines: number; totalBytes: number } {
    const totalLines = this.#totalBytes === 0 ? 0 : this.#newlines + (this.#lastByte === 0x0a ? 0 : 1);
    return { data: Buffer.concat(this.#parts), totalLines, totalBytes: this.#totalBytes };
  }

  #select(chunk: Buffer): void {
    const { startLine, maxLines, maxBytes } = this.#range;
    const endLine = startLine + maxLines; // first line not selected
    let lineNo = this.#newlines + 1; // line the chunk starts in
    let from = -1;
    let pos = 0;
    if (lineNo >= startLine) from = 0;
    while (pos < chunk.length && lineNo < endLine) {
      const newline = chunk.indexOf(0x0a, pos);
      if (newline === -1) break;
      lineNo++;
      pos = newline + 1;
      if (lineNo === startLine) from = pos;
    }
    const to = lineNo >= endLine ? pos : chunk.length;
    if (lineNo >= endLine || maxLines === 0) this.#selectionDone = true;
    if (from === -1 || from >= to) return;
    const room = maxBytes - this.#selectedBytes;
    const take = Math.min(room, to - from);
    if (take > 0) {
      this.#parts.push(Buffer.from(chunk.subarray(from, from + take)));
      this.#selectedBytes += take;
    }
    if (this.#selectedBytes >= maxBytes) this.#selectionDone = true;
  }
}
