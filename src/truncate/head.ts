/** Head truncation (keep the first lines), Pi's truncateHead on bytes. Pure, no I/O. */
import { countLines, toBuffer } from "./lines.js";
import { resolveLimits, type TruncationOptions, type TruncationResult, wholeResult } from "./types.js";

/**
 * Keeps whole lines from the start while both limits hold: at most `maxLines` lines and at most
 * `maxBytes` bytes of content (the newline after the last kept line is not part of the content).
 * Whole lines only, so no UTF-8 character is ever split. When the first line alone is over
 * `maxBytes`, the content is empty and `firstLineExceedsLimit` is set (Pi). Input that fits is
 * returned unchanged. Source: Pi's truncateHead (pi-mono coding-agent core/tools/truncate.ts).
 */
export function truncateHead(input: Buffer | string, options: TruncationOptions = {}): TruncationResult {
  const buf = toBuffer(input);
  const { maxLines, maxBytes } = resolveLimits(options);
  const totalBytes = buf.length;
  const totalLines = countLines(buf);
  if (totalLines <= maxLines && totalBytes <= maxBytes) {
    return wholeResult(buf, totalLines, totalBytes, maxLines, maxBytes);
  }
  const base = { totalLines, totalBytes, lastLinePartial: false, maxLines, maxBytes };
  let lines = 0;
  let end = 0;
  let pos = 0;
  let truncatedBy: "lines" | "bytes" = "lines";
  while (lines < maxLines && pos < buf.length) {
    const newline = buf.indexOf(0x0a, pos);
    const lineEnd = newline === -1 ? buf.length : newline;
    if (lineEnd > maxBytes) {
      truncatedBy = "bytes";
      break;
    }
    end = lineEnd;
    lines++;
    pos = newline === -1 ? buf.length : newline + 1;
  }
  // Every line fit: only the final newline was over the byte cap. Nothing of substance was cut.
  const truncated = lines < totalLines;
  return {
    ...base,
    content: buf.toString("utf8", 0, end),
    truncated,
    truncatedBy: truncated ? truncatedBy : null,
    outputLines: lines,
    outputBytes: end,
    firstLineExceedsLimit: lines === 0 && truncatedBy === "bytes",
  };
}
