/** Tail truncation (keep the last lines), Pi's truncateTail on bytes. Pure, no I/O. */
import { charStartAtOrAfter, countLines, toBuffer } from "./lines.js";
import { resolveLimits, type TruncationOptions, type TruncationResult, wholeResult } from "./types.js";

/** Where a tail cut starts in a buffer, and what it kept. */
interface TailCut {
  /** Byte offset where the kept suffix starts. */
  start: number;
  outputLines: number;
  truncatedBy: "lines" | "bytes";
  lastLinePartial: boolean;
}

/**
 * Finds the longest suffix of `buf` made of whole lines with at most `maxLines` lines and at most
 * `maxBytes` bytes (a kept line includes its newline). When even the last line is over `maxBytes`,
 * keeps its last `maxBytes` bytes, moved forward to a character start (never a split character).
 * Callers use it only when `buf` does not fit as a whole.
 */
function tailCut(buf: Buffer, maxLines: number, maxBytes: number): TailCut {
  let start = buf.length;
  let lines = 0;
  // The last line's terminator belongs to it, so the search for its start begins before it.
  let searchFrom = buf[buf.length - 1] === 0x0a ? buf.length - 2 : buf.length - 1;
  while (lines < maxLines && start > 0) {
    // lastIndexOf with a negative offset counts from the end, so guard it.
    const newline = searchFrom >= 0 ? buf.lastIndexOf(0x0a, searchFrom) : -1;
    const lineStart = newline + 1;
    if (buf.length - lineStart > maxBytes) {
      if (lines === 0) {
        const partialStart = charStartAtOrAfter(buf, buf.length - maxBytes);
        return { start: partialStart, outputLines: 1, truncatedBy: "bytes", lastLinePartial: true };
      }
      return { start, outputLines: lines, truncatedBy: "bytes", lastLinePartial: false };
    }
    start = lineStart;
    lines++;
    searchFrom = newline - 1;
  }
  return { start, outputLines: lines, truncatedBy: "lines", lastLinePartial: false };
}

/**
 * Keeps whole lines from the end while at most `maxLines` lines and `maxBytes` bytes are kept; the
 * kept text is an exact suffix of the input (with its final newline, if any). When the last line
 * alone is over `maxBytes`, its final bytes are kept from a character start (`lastLinePartial`).
 * Input that fits is returned unchanged. Source: Pi's truncateTail (pi-mono core/tools/truncate.ts).
 */
export function truncateTail(input: Buffer | string, options: TruncationOptions = {}): TruncationResult {
  const buf = toBuffer(input);
  const { maxLines, maxBytes } = resolveLimits(options);
  return tailResult(buf, buf.length, countLines(buf), maxLines, maxBytes);
}

/**
 * The tail truncation of a window of a stream: `window` holds the stream's last bytes (all of
 * them, or at least maxBytes + 1), `totalBytes`/`totalLines` describe the whole stream.
 */
export function tailResult(
  window: Buffer,
  totalBytes: number,
  totalLines: number,
  maxLines: number,
  maxBytes: number,
): TruncationResult {
  if (totalLines <= maxLines && totalBytes <= maxBytes) {
    return wholeResult(window, totalLines, totalBytes, maxLines, maxBytes);
  }
  const cut = tailCut(window, maxLines, maxBytes);
  return {
    totalLines,
    totalBytes,
    firstLineExceedsLimit: false,
    maxLines,
    maxBytes,
    content: window.toString("utf8", cut.start),
    truncated: true,
    truncatedBy: cut.truncatedBy,
    outputLines: cut.outputLines,
    outputBytes: window.length - cut.start,
    lastLinePartial: cut.lastLinePartial,
  };
}
