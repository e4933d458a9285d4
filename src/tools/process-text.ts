/**
 * The process tool's texts for the model: a process's state in one line, the session's list, and
 * one slice of a process's output cut to Pi's limits (DEFAULT_MAX_LINES lines or DEFAULT_MAX_BYTES
 * bytes, whichever is hit first), sanitised as bash's output is, with the offset to continue from.
 */
import type { OutputSlice, ProcessInfo } from "../process/index.js";
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, formatSize, OutputSanitizer } from "../truncate/index.js";
import { joinBlocks, replacedBytesNotice } from "./output-notice.js";

/** Longest command line `list` shows, in characters; a longer one ends with `…`. */
const MAX_LISTED_COMMAND_CHARS = 200;

/** `running`, `exited with code 0`, or `ended by signal 15 (exit code 143)`. */
function stateText(p: ProcessInfo): string {
  if (p.state === "running") return "running";
  if (p.exitSignal !== undefined) return `ended by signal ${p.exitSignal} (exit code ${p.exitCode})`;
  return `exited with code ${p.exitCode}`;
}

/** `Process p1 is running.`, `Process p1 exited with code 0.`, … */
export function statusLine(p: ProcessInfo): string {
  return `Process ${p.id} ${p.state === "running" ? "is running" : stateText(p)}.`;
}

/** The first line of a command, at most MAX_LISTED_COMMAND_CHARS characters (` …` marks a cut). */
function oneLine(command: string): string {
  const first = command.split("\n", 1)[0] ?? "";
  const cut = first.length > MAX_LISTED_COMMAND_CHARS || first.length < command.length;
  return cut ? `${first.slice(0, MAX_LISTED_COMMAND_CHARS)} …` : first;
}

/** One line per process, `p1  running  1.2KB  npm run dev` (`pty` after the size when it has one). */
export function listText(processes: readonly ProcessInfo[]): string {
  if (processes.length === 0) return "(no processes)";
  return processes
    .map((p) =>
      [p.id, stateText(p), formatSize(p.outputBytes), ...(p.pty ? ["pty"] : []), oneLine(p.commandLine)].join(
        "  ",
      ),
    )
    .join("\n");
}

/**
 * Where the complete UTF-8 characters of `buf[0, end)` end: an incomplete character at the end is
 * left for the next slice (so no character is split across two), anything else is kept.
 */
function completeCharsEnd(buf: Buffer, end: number): number {
  let lead = end - 1;
  while (lead >= 0 && end - lead <= 3 && ((buf[lead] ?? 0) & 0xc0) === 0x80) lead--;
  if (lead < 0) return end;
  const byte = buf[lead] ?? 0;
  const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
  return end - lead < length ? lead : end;
}

/** details of an `output` result. */
export interface OutputSliceDetails {
  id: string;
  /** Offset of the first byte shown. */
  offset: number;
  /** Where the next read continues (offset + bytes shown). */
  nextOffset: number;
  /** The stream's length when it was read. */
  totalBytes: number;
  /** Bytes asked for that were no longer kept. */
  skipped?: number;
  /** The limit that cut the slice, when one did. */
  truncatedBy?: "lines" | "bytes";
  /** Invalid UTF-8 / NUL bytes replaced with U+FFFD in the shown text. */
  replacedBytes?: number;
  process: ProcessInfo;
}

/** Limits of one slice; Pi's by default. */
export interface SliceLimits {
  maxBytes?: number;
  maxLines?: number;
}

/** End of the shown part of `data` and the limit that set it (see renderSlice). */
function shownEnd(
  slice: OutputSlice,
  maxBytes: number,
  maxLines: number,
): { end: number; truncatedBy?: "lines" | "bytes" } {
  const { data, offset, process } = slice;
  let end = Math.min(data.length, maxBytes);
  let truncatedBy: "lines" | "bytes" | undefined;
  if (end === maxBytes && offset + end < process.outputBytes) {
    truncatedBy = "bytes";
    // Whole lines, as Pi's head truncation keeps; a line longer than the limit is cut inside.
    const lastNewline = data.lastIndexOf(0x0a, end - 1);
    if (lastNewline !== -1) end = lastNewline + 1;
  }
  let newline = -1;
  for (let n = 0; n < maxLines; n++) {
    newline = data.indexOf(0x0a, newline + 1);
    if (newline === -1 || newline >= end) break;
  }
  if (newline !== -1 && newline + 1 < end) {
    end = newline + 1;
    truncatedBy = "lines";
  }
  // The stream's very end, once nothing more can come, is shown whole (a broken last character replaced).
  const final = process.state === "exited" && offset + end === process.outputBytes;
  return { end: final ? end : completeCharsEnd(data, end), ...(truncatedBy ? { truncatedBy } : {}) };
}

/** The notice saying what was shown and where to continue. */
function continuationNotice(
  from: number,
  next: number,
  total: number,
  running: boolean,
  limit: string | undefined,
): string {
  if (next < total) {
    const shown =
      next > from ? `Showing bytes ${from}-${next - 1} of ${total}` : `${total - next} bytes not shown`;
    return `[${shown}${limit ? ` (${limit})` : ""}. Use offset=${next} to continue.]`;
  }
  return running ? `[No more output yet. Use offset=${next} to read what comes next.]` : "[End of output.]";
}

/**
 * The model's text of one output slice: the bytes from `slice.offset`, cut to the first `maxLines`
 * lines and `maxBytes` bytes and never inside a character, sanitised (ANSI removed, invalid UTF-8
 * and NUL replaced and counted), then notices: skipped bytes, what was shown and `offset=N` to
 * continue from, replaced bytes, output the sandbox could not keep, and the process's state.
 */
export function renderSlice(
  slice: OutputSlice,
  limits: SliceLimits = {},
): { text: string; details: OutputSliceDetails } {
  const maxBytes = limits.maxBytes ?? DEFAULT_MAX_BYTES;
  const maxLines = limits.maxLines ?? DEFAULT_MAX_LINES;
  const { offset, process } = slice;
  const { end, truncatedBy } = shownEnd(slice, maxBytes, maxLines);
  const sanitizer = new OutputSanitizer();
  const shown = slice.data.subarray(0, end);
  const body = Buffer.concat([sanitizer.push(shown), sanitizer.end()]).toString("utf8");
  const next = offset + end;
  const total = Math.max(process.outputBytes, next);
  const limit =
    truncatedBy === "bytes"
      ? `${formatSize(maxBytes)} limit`
      : truncatedBy === "lines"
        ? `${maxLines} lines limit`
        : undefined;
  const skipped =
    slice.skipped > 0
      ? `[${slice.skipped} bytes skipped: output before offset ${offset} is no longer kept]`
      : undefined;
  const dropped =
    process.droppedBytes > 0
      ? `[${process.droppedBytes} bytes of output could not be kept (the sandbox's /tmp was full)]`
      : undefined;
  const replaced = sanitizer.replacedBytes > 0 ? replacedBytesNotice(sanitizer.replacedBytes) : undefined;
  const text = joinBlocks(
    body || "(no new output)",
    skipped,
    continuationNotice(offset, next, total, process.state === "running", limit),
    replaced,
    dropped,
    statusLine(process),
  );
  const details: OutputSliceDetails = {
    id: process.id,
    offset,
    nextOffset: next,
    totalBytes: total,
    ...(slice.skipped > 0 ? { skipped: slice.skipped } : {}),
    ...(truncatedBy ? { truncatedBy } : {}),
    ...(sanitizer.replacedBytes > 0 ? { replacedBytes: sanitizer.replacedBytes } : {}),
    process,
  };
  return { text, details };
}
