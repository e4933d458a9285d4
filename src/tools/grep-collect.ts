/**
 * Turns ripgrep's `--json` events (one JSON object per line: begin, match, context, end, summary;
 * ripgrep 13 docs "JSON output") into Pi's grep lines, `rel:N: text` for matches and `rel-N- text`
 * for context, with Pi's limits: a match limit, a byte cap on the output and 500-character lines.
 * Pure: the grep tool feeds it the lines and stops ripgrep when it says so.
 */
import { GREP_MAX_LINE_CHARS, SEARCH_MAX_BYTES, truncateLine } from "./search-common.js";

/** ripgrep's way of carrying text that may not be UTF-8. */
interface RgData {
  text?: string;
  bytes?: string;
}

interface RgLineEvent {
  type: "match" | "context";
  data: { path?: RgData; lines?: RgData; line_number?: number | null };
}

/** Options of a collector. */
export interface GrepCollectorOptions {
  /** Most matches to show (>= 1). */
  limit: number;
  /** Context lines requested around each match (for trailing context after the last match). */
  context: number;
  /** Display path of an absolute path, or null to drop it (outside the sandbox roots). */
  displayPath: (absPath: string) => string | null;
  /** Output cap in bytes. Default 51,200. */
  maxBytes?: number;
  /** Characters per shown line. Default 500. */
  maxLineChars?: number;
}

/** What the collector saw, for the tool's notices and details. */
export interface GrepCollectorResult {
  lines: string[];
  matchCount: number;
  /** A match beyond `limit` existed. */
  matchLimitReached: boolean;
  /** The byte cap stopped the output. */
  bytesLimitReached: boolean;
  /** Some line was cut to `maxLineChars`. */
  linesTruncated: boolean;
  /** Events dropped because their path was outside the roots. */
  droppedOutside: number;
}

function decode(data: RgData | undefined): string | null {
  if (!data) return null;
  if (typeof data.text === "string") return data.text;
  if (typeof data.bytes === "string") return Buffer.from(data.bytes, "base64").toString("utf8");
  return null;
}

/** Accumulates rg JSON lines; `accept` returns "stop" once the output is complete. */
export class GrepCollector {
  readonly #o: Required<GrepCollectorOptions>;
  readonly #result: GrepCollectorResult = {
    lines: [],
    matchCount: 0,
    matchLimitReached: false,
    bytesLimitReached: false,
    linesTruncated: false,
    droppedOutside: 0,
  };
  #bytes = 0;
  #last: { path: string; line: number } | null = null;
  #stopped = false;

  constructor(options: GrepCollectorOptions) {
    this.#o = { maxBytes: SEARCH_MAX_BYTES, maxLineChars: GREP_MAX_LINE_CHARS, ...options };
  }

  /** Feeds one line of rg's output. Returns "stop" when nothing more will be shown. */
  accept(jsonLine: string): "continue" | "stop" {
    if (this.#stopped) return "stop";
    if (jsonLine.trim() === "") return "continue";
    let event: { type?: unknown; data?: unknown };
    try {
      event = JSON.parse(jsonLine) as { type?: unknown; data?: unknown };
    } catch {
      return "continue";
    }
    if (event.type !== "match" && event.type !== "context") return "continue";
    const { data } = event as RgLineEvent;
    const abs = decode(data.path);
    const lineNumber = data.line_number;
    if (abs === null || typeof lineNumber !== "number") return "continue";
    const rel = this.#o.displayPath(abs);
    if (rel === null) {
      this.#result.droppedOutside++;
      return "continue";
    }
    const isMatch = event.type === "match";
    if (this.#result.matchCount >= this.#o.limit) {
      // Past the limit: only the trailing context of the last shown match is still wanted.
      const last = this.#last;
      if (isMatch) return this.#stop("match-limit");
      if (!last || last.path !== abs || lineNumber > last.line + this.#o.context) return "continue";
    }
    const raw = (decode(data.lines) ?? "").replace(/\r?\n$/, "").replace(/\r/g, "");
    const { text, truncated } = truncateLine(raw, this.#o.maxLineChars);
    const line = isMatch ? `${rel}:${lineNumber}: ${text}` : `${rel}-${lineNumber}- ${text}`;
    const size = Buffer.byteLength(line, "utf8") + (this.#result.lines.length > 0 ? 1 : 0);
    if (this.#bytes + size > this.#o.maxBytes) return this.#stop("bytes");
    if (truncated) this.#result.linesTruncated = true;
    this.#bytes += size;
    this.#result.lines.push(line);
    if (isMatch) {
      this.#result.matchCount++;
      this.#last = { path: abs, line: lineNumber };
    }
    return "continue";
  }

  /** The collected lines and flags. */
  result(): GrepCollectorResult {
    return this.#result;
  }

  #stop(reason: "match-limit" | "bytes"): "stop" {
    this.#stopped = true;
    if (reason === "match-limit") this.#result.matchLimitReached = true;
    else this.#result.bytesLimitReached = true;
    return "stop";
  }
}
