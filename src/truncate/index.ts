/** Truncation: pure head/tail cutting (UTF-8 safe), output sanitising, streaming tail, line ranges. */
export { truncateHead } from "./head.js";
export { LineRangeCollector, type LineRangeSpec } from "./line-range.js";
export { countLines } from "./lines.js";
export { OutputSanitizer, type SanitizeOptions, type SanitizeResult, sanitizeOutput } from "./sanitize.js";
export { truncateTail } from "./tail.js";
export { TailAccumulator } from "./tail-accumulator.js";
export {
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_LINES,
  formatSize,
  type TruncationOptions,
  type TruncationResult,
} from "./types.js";
