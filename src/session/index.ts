/** Sessions: a sandbox, its spill files, its enabled tools and hooks, and the pipeline. */
export { createSession } from "./create-session.js";
export { openSession, type SessionDependencies } from "./open-session.js";
export {
  parseJsonLines,
  parseReplayTurns,
  type ReplayTurn,
  resolvePlaceholders,
  spillPathOf,
  toToolCall,
} from "./replay-turns.js";
export {
  MAX_SESSION_ENV_VALUE_BYTES,
  validateSessionEnv,
  withSessionEnv,
} from "./session-env.js";
export { adoptSpillStore } from "./spill-adopt.js";
export { DEFAULT_SPILL_SESSION_MAX_BYTES, SpillBudget } from "./spill-budget.js";
export { createSpillStore } from "./spill-store.js";
export { sweepSpillDirs } from "./spill-sweep.js";
export type * from "./types.js";
