/**
 * warden's public API: sessions (the entry point), the pipeline's types and stages, the tool and
 * sandbox interfaces, and the errors. Everything else is internal.
 */
export * from "./agent/index.js";
export * from "./approval/index.js";
export * from "./audit/index.js";
export * from "./errors.js";
export * from "./pipeline/index.js";
export * from "./policy/index.js";
export * from "./pool/index.js";
export * from "./review/index.js";
export * from "./sandbox/index.js";
export * from "./session/index.js";
export { DEFAULT_SPILL_SESSION_MAX_BYTES, SpillBudget } from "./session/spill-budget.js";
export { createSpillStore, HostSpillStore, type SpillStoreOptions } from "./session/spill-store.js";
export { type SpillSweepRemoval, sweepSpillDirs } from "./session/spill-sweep.js";
export * from "./tools/index.js";
export * from "./truncate/index.js";
export { AbortError, isAbortError } from "./util/abort.js";
