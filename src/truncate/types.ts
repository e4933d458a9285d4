/**
 * Truncation limits and result metadata, as in Pi's truncate module (pi-mono coding-agent
 * core/tools/truncate.ts; shared/reference/pi-tool-semantics.md). The tools word their own notices
 * from this metadata.
 */

/** Pi's line limit: at most 2000 lines are shown. */
export const DEFAULT_MAX_LINES = 2000;
/** Pi's byte limit: at most 50 KiB (51,200 bytes) of UTF-8 are shown. */
export const DEFAULT_MAX_BYTES = 50 * 1024;

/** Limits for one truncation; whichever is hit first wins. */
export interface TruncationOptions {
  /** Maximum number of lines kept. Default 2000. */
  maxLines?: number;
  /** Maximum number of UTF-8 bytes kept. Default 51,200. */
  maxBytes?: number;
}

/**
 * What a truncation kept and why (Pi's TruncationResult). Lines are counted with "\n" as a
 * terminator: "a\nb\n" and "a\nb" both have 2 lines, "" has 0. Byte counts are UTF-8 bytes.
 */
export interface TruncationResult {
  /** The kept text (valid UTF-8 when the input was). */
  content: string;
  truncated: boolean;
  /** Which limit cut the output; null when nothing was cut. */
  truncatedBy: "lines" | "bytes" | null;
  totalLines: number;
  totalBytes: number;
  outputLines: number;
  outputBytes: number;
  /** Tail only: the last line alone was over the byte limit, so only its final bytes are kept. */
  lastLinePartial: boolean;
  /** Head only: the first line alone is over the byte limit, so nothing is kept. */
  firstLineExceedsLimit: boolean;
  maxLines: number;
  maxBytes: number;
}

/** Pi's human-readable size: "512B", "50.0KB", "1.5MB" (1024-based). */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes}B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)}KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)}MB`;
}

/**
 * The result for an input that fits both limits: `buf` whole, nothing cut. `totalLines` and
 * `totalBytes` describe the input (for a stream's window, the whole stream).
 */
export function wholeResult(
  buf: Buffer,
  totalLines: number,
  totalBytes: number,
  maxLines: number,
  maxBytes: number,
): TruncationResult {
  return {
    content: buf.toString("utf8"),
    truncated: false,
    truncatedBy: null,
    totalLines,
    totalBytes,
    outputLines: totalLines,
    outputBytes: buf.length,
    lastLinePartial: false,
    firstLineExceedsLimit: false,
    maxLines,
    maxBytes,
  };
}

/** Resolves the limits, rejecting nonsense with a RangeError naming the field. */
export function resolveLimits(options: TruncationOptions): { maxLines: number; maxBytes: number } {
  const maxLines = options.maxLines ?? DEFAULT_MAX_LINES;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  if (!(maxLines >= 1)) throw new RangeError(`maxLines must be at least 1, got ${maxLines}`);
  if (!(maxBytes >= 1)) throw new RangeError(`maxBytes must be at least 1, got ${maxBytes}`);
  return { maxLines, maxBytes };
}
