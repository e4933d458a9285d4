/** The tool-call pipeline: stages in call order, batching, the file-mutation queue, the tool sets. */

export { type Throttled, throttle } from "../util/index.js";
export { argumentDepthMessage, MAX_ARGUMENT_DEPTH, nestsDeeperThan } from "./argument-depth.js";
export {
  type DuplicateIdDetails,
  DuplicateToolCallIdError,
  duplicateToolCallIdResults,
  duplicateToolCallIds,
  duplicateToolCallIdsText,
} from "./batch-ids.js";
export {
  callFieldRefusal,
  MAX_PROGRESS_TOKEN_CHARS,
  MAX_TOOL_CALL_ID_CHARS,
  MAX_TOOL_NAME_CHARS,
} from "./call-fields.js";
export { FileMutationQueue, mutationKey } from "./mutation-queue.js";
export {
  buildProviderTools,
  createToolRegistry,
  selectEnabledTools,
  type ToolRegistry,
} from "./registry.js";
export {
  errorResult,
  errorText,
  normaliseOutput,
  type PipelineErrorDetails,
  type PipelineStage,
  resultMessage,
  thrownResult,
} from "./result.js";
export {
  type CallRecord,
  executePreparedCall,
  isSequentialBatch,
  type PipelineContext,
  type PreparedCall,
  preflightCall,
  runToolCalls,
} from "./run-tool-calls.js";
export {
  checkNotAborted,
  type ExecutionOutcome,
  executeTool,
  frozenClone,
  type HookEnvironment,
  lookupTool,
  prepareToolArguments,
  runAfterToolCallHooks,
  runBeforeToolCallHooks,
  type StageOutcome,
  validateArguments,
} from "./stages.js";
export type * from "./types.js";
export {
  compiledValidator,
  formatValidationError,
  MAX_ECHO_CHARS,
  MAX_ECHO_DEPTH,
  MAX_ERROR_LINE_CHARS,
  MAX_ERROR_LINES,
  type ValidationOutcome,
  validateToolArguments,
} from "./validate.js";
