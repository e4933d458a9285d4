/** Helpers with no warden concept: abort signals, bounded JSON echoes, slots, option bags without undefined keys, the worker pool, line diffs, terminal-safe text, schema errors, JSON.parse reasons, a string-sharing deep copy, helper threads' priority, optional packages. */
export { AbortError, type AbortFanOut, abortFanOut, isAbortError, onAbort, throwIfAborted } from "./abort.js";
export { boundedJson } from "./bounded-json.js";
export { cloneSharingStrings } from "./clone.js";
export { jsonParseReason } from "./json-reason.js";
export {
  type DiffJob,
  diffJob,
  diffLineHunks,
  INLINE_DIFF_MAX_CHARS,
  type LineHunk,
  lineHunksOf,
} from "./line-diff.js";
export { omitUndefined } from "./omit-undefined.js";
export {
  importOptional,
  installCommand,
  OPTIONAL_FEATURES,
  packageInstalled,
} from "./optional-package.js";
export { dottedPath, piSchemaErrorLines, schemaErrorLines } from "./schema-errors.js";
export { Slots } from "./slots.js";
export { terminalSafe, terminalSafeLine } from "./terminal-text.js";
export { lowerHelperThreads } from "./thread-priority.js";
export { type Throttled, throttle } from "./throttle.js";
export { lazySharedPool, runOrFallBack } from "./worker-pool.js";
export { processCpuMs, refWorkerProcess, startWorkerProcess, workerModule } from "./worker-process.js";
