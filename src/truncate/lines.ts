/** Byte-level line and UTF-8 helpers shared by the truncation functions. Pure, no I/O. */

const NEWLINE = 0x0a;

/** The input as bytes (strings are encoded as UTF-8). */
export function toBuffer(input: Buffer | string): Buffer {
  return typeof input === "string" ? Buffer.from(input, "utf8") : input;
}

/** Number of newline bytes in `buf`. */
export function countNewlines(buf: Buffer): number {
  let count = 0;
  let pos = buf.indexOf(NEWLINE);
  while (pos !== -1) {
    count++;
    // indexOf (memchr) is fastest for sparse newlines; for dense ones (short lines, e.g. `yes`)
    // its per-call cost dominates and a plain loop over the rest is several times faster.
    if (count === DENSE_PROBE && pos < DENSE_PROBE * 64) return count + countNewlinesFrom(buf, pos + 1);
    pos = buf.indexOf(NEWLINE, pos + 1);
  }
  return count;
}

const DENSE_PROBE = 64;

function countNewlinesFrom(buf: Buffer, start: number): number {
  let count = 0;
  for (let i = start; i < buf.length; i++) if (buf[i] === NEWLINE) count++;
  return count;
}

/** Lines with "\n" as terminator: newlines, plus one for an unterminated last line. "" has 0. */
export function countLines(buf: Buffer): number {
  if (buf.length === 0) return 0;
  return countNewlines(buf) + (buf[buf.length - 1] === NEWLINE ? 0 : 1);
}

/** True for a UTF-8 continuation byte (10xxxxxx). */
export function isContinuationByte(byte: number | undefined): boolean {
  return byte !== undefined && (byte & 0xc0) === 0x80;
}

/** The first character start at or after `offset` (skips continuation bytes, so no character is split). */
export function charStartAtOrAfter(buf: Buffer, offset: number): number {
  let pos = Math.max(0, offset);
  while (pos < buf.length && isContinuationByte(buf[pos])) pos++;
  return pos;
}
