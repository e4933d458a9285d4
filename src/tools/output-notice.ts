/** Notices the tools append to model-visible text, worded once. */
import { formatSize } from "../truncate/index.js";
import type { ToolOutput } from "./types.js";

/** `[N invalid UTF-8 or NUL bytes replaced with U+FFFD]`, so the model knows bytes were altered (public fault 16). */
export function replacedBytesNotice(count: number): string {
  return `[${count} invalid UTF-8 or NUL ${count === 1 ? "byte" : "bytes"} replaced with U+FFFD]`;
}

/** Joins text and notices with blank lines, skipping empty parts (Pi's "output + blank + status"). */
export function joinBlocks(...parts: (string | undefined)[]): string {
  return parts.filter((p): p is string => p !== undefined && p !== "").join("\n\n");
}

/**
 * Pi's count-limit notice of grep, find and ls: `<limit> <noun> limit reached. Use limit=<2×limit> for
 * more`, then `, or refine pattern` when `refine` (grep and find).
 */
export function countLimitNotice(limit: number, noun: string, refine: boolean): string {
  return `${limit} ${noun} limit reached. Use limit=${limit * 2} for more${refine ? ", or refine pattern" : ""}`;
}

/** Pi's byte-cap notice: `50.0KB limit reached` for 51200. */
export function bytesLimitNotice(maxBytes: number): string {
  return `${formatSize(maxBytes)} limit reached`;
}

/** Details field of grep and find behind bytesLimitNotice (Pi's name). */
export interface ByteCapDetails {
  /** True when the 50 KiB cap cut the output. */
  bytesLimitReached?: boolean;
}

/**
 * The notices of one grep, find or ls result and the details fields behind each, in the order noted.
 * `output(text)` appends Pi's notice block `\n\n[a. b]` (nothing when no notice) and returns details
 * only when something was noted (as Pi does).
 */
export class ResultNotices<D extends object> {
  readonly #notices: string[] = [];
  readonly #details: Partial<D> = {};

  /** Adds `notice` to the text and `details` to the result's details. */
  note(notice: string, details: Partial<D>): void {
    this.#notices.push(notice);
    Object.assign(this.#details, details);
  }

  /** The tool output: `text` with the notice block, and the details noted (undefined when none). */
  output(text: string): ToolOutput<D | undefined> {
    const notices = this.#notices;
    return {
      content: [{ type: "text", text: notices.length > 0 ? `${text}\n\n[${notices.join(". ")}]` : text }],
      details: notices.length > 0 ? (this.#details as D) : undefined,
    };
  }
}
