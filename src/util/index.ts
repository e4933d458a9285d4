/** Helpers with no warden concept: abort signals, slots, the worker pool, line diffs, terminal-safe text, schema errors. */
export { AbortError, isAbortError, onAbort, throwIfAborted } from "./abort.js";
export { diffLineHunks } from "./line-diff.js";
export { schemaErrorLines } from "./schema-errors.js";
export { Slots } from "./slots.js";
export { terminalSafe } from "./terminal-text.js";
export { lazySharedPool } from "./worker-pool.js";
