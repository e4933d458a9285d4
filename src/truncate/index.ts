/** Truncation: pure head/tail cutting (UTF-8 safe), output sanitising, streaming tail, line ranges. */
export { truncateHead } from "./head.js";
export { LineRangeCollector } from "./line-range.js";

export { OutputSanitizer } from "./sanitize.js";

export { TailAccumulator } from "./tail-accumulator.js";
export {
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_LINES,
  formatSize,
  type TruncationResult,
} from "./types.js";
