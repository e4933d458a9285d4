/**
 * The text half of the read tool: one line-range read (never the whole file), head truncation at
 * 2000 lines / 50 KiB, and Pi's footers (pi-mono coding-agent core/tools/read.ts): shown range,
 * total, and `offset=N` to continue; "Offset N is beyond end of file"; the note for a first line
 * over 50 KiB, with the line's size when the source can measure it. Unlike Pi, a UTF-8 BOM is never shown and invalid bytes are reported.
 */

import { InvalidArgumentError } from "../errors.js";
import type { ReadFileResult, ReadRange } from "../sandbox/index.js";
import {
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_LINES,
  formatSize,
  OutputSanitizer,
  type TruncationResult,
  truncateHead,
} from "../truncate/index.js";
import { joinBlocks, replacedBytesNotice } from "./output-notice.js";

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** Where the read tool reads from: a sandbox file or one of the session's spill files. */
export interface ReadSource {
  /** The path as the model gave it, for messages. */
  displayPath: string;
  /** True for a host spill file (bash cannot reach it, so notes do not suggest bash). */
  isSpill: boolean;
  read(range: ReadRange): Promise<ReadFileResult>;
  /** Byte length of 1-based line `line` without its newline, when it can be measured. */
  lineBytes?(line: number): Promise<number | undefined>;
}

/** details of a text read. */
export interface ReadTextDetails {
  truncation?: TruncationResult;
  /** Invalid UTF-8 / NUL bytes replaced with U+FFFD in the shown text. */
  replacedBytes?: number;
}

/** The line read for an offset/limit: 2001 lines and 51,201 bytes are asked, one more than shown, to detect a cut. */
export interface TextReadRequest {
  /** 1-based first line. */
  startLine: number;
  /** The model's limit, floored; undefined when not given. */
  userLimit: number | undefined;
  range: Extract<ReadRange, { kind: "lines" }>;
}

/** Plans the line read for `offset`/`limit` (Pi: 1-based offset, default 1). Rejects InvalidArgumentError for a limit < 1. */
export function textReadRequest(offset: number | undefined, limit: number | undefined): TextReadRequest {
  if (limit !== undefined && !(limit >= 1)) {
    throw new InvalidArgumentError(`limit must be at least 1 line, got ${limit}.`);
  }
  const startLine = offset === undefined ? 1 : Math.max(1, Math.floor(offset));
  const userLimit = limit === undefined ? undefined : Math.floor(limit);
  const bomBytes = startLine === 1 ? BOM.length : 0;
  return {
    startLine,
    userLimit,
    range: {
      kind: "lines",
      startLine,
      maxLines: Math.min(userLimit ?? Number.POSITIVE_INFINITY, DEFAULT_MAX_LINES + 1),
      maxBytes: DEFAULT_MAX_BYTES + 1 + bomBytes,
    },
  };
}

/** True when the first line of a planned read is over 50 KiB (Pi then shows only a note). */
export function firstLineOverLimit(request: TextReadRequest, result: ReadFileResult): boolean {
  let data = result.data;
  if (request.startLine === 1 && data.subarray(0, 3).equals(BOM)) data = data.subarray(3);
  const newline = data.indexOf(0x0a);
  return (newline === -1 ? data.length : newline) > DEFAULT_MAX_BYTES;
}

/**
 * Words the result of a planned line read: head truncation at 2000 lines / 51,200 bytes and Pi's
 * footers. Rejects InvalidArgumentError for an offset past the end (naming the total).
 */
export function formatTextRead(
  source: Pick<ReadSource, "displayPath" | "isSpill">,
  request: TextReadRequest,
  result: ReadFileResult,
  offset: number | undefined,
  firstLineBytes?: number,
): { text: string; details?: ReadTextDetails } {
  const { startLine, userLimit } = request;
  const totalLines = result.totalLines;
  let data = result.data;
  if (data.length === 0 && startLine > 1) {
    const total = totalLines === undefined ? "" : ` (${totalLines} lines total)`;
    throw new InvalidArgumentError(`Offset ${offset} is beyond end of file${total}`);
  }
  const capped = data.length >= request.range.maxBytes;
  if (startLine === 1 && data.subarray(0, 3).equals(BOM)) data = data.subarray(3);
  const sanitizer = new OutputSanitizer({ stripAnsi: false });
  const clean = capped ? sanitizer.push(data) : Buffer.concat([sanitizer.push(data), sanitizer.end()]);
  const replaced = sanitizer.replacedBytes > 0 ? replacedBytesNotice(sanitizer.replacedBytes) : undefined;
  const truncation = truncateHead(clean);
  const details: ReadTextDetails = {};
  if (sanitizer.replacedBytes > 0) details.replacedBytes = sanitizer.replacedBytes;
  const of = totalLines === undefined ? "" : ` of ${totalLines}`;

  if (truncation.firstLineExceedsLimit) {
    details.truncation = truncation;
    const limitText = formatSize(DEFAULT_MAX_BYTES);
    const note = source.isSpill
      ? `[Line ${startLine} exceeds the ${limitText} limit and this spill file is outside the sandbox; re-run the command with its output cut, e.g. '| cut -c1-1000'.]`
      : firstLineBytes === undefined
        ? `[Line ${startLine} exceeds the ${limitText} limit. Use bash: sed -n '${startLine}p' ${source.displayPath} | head -c ${DEFAULT_MAX_BYTES}]`
        : `[Line ${startLine} is ${formatSize(firstLineBytes)}, exceeds ${limitText} limit. Use bash: sed -n '${startLine}p' ${source.displayPath} | head -c ${DEFAULT_MAX_BYTES}]`;
    return { text: note, details };
  }
  if (truncation.truncated) {
    details.truncation = truncation;
    const endLine = startLine + truncation.outputLines - 1;
    const bytesNote = truncation.truncatedBy === "bytes" ? ` (${formatSize(DEFAULT_MAX_BYTES)} limit)` : "";
    const footer = `[Showing lines ${startLine}-${endLine}${of}${bytesNote}. Use offset=${endLine + 1} to continue.]`;
    return { text: joinBlocks(truncation.content, footer, replaced), details };
  }
  const shownEnd = startLine + truncation.outputLines - 1;
  let more: string | undefined;
  if (userLimit !== undefined && truncation.outputLines >= userLimit) {
    if (totalLines === undefined) more = `[More lines may follow. Use offset=${shownEnd + 1} to continue.]`;
    else if (shownEnd < totalLines) {
      more = `[${totalLines - shownEnd} more lines in file. Use offset=${shownEnd + 1} to continue.]`;
    }
  }
  const text =
    more || replaced ? joinBlocks(truncation.content.replace(/\n$/, ""), more, replaced) : truncation.content;
  return { text, ...(Object.keys(details).length > 0 ? { details } : {}) };
}
