/** The tool-call pipeline: stages in call order, batching, the file-mutation queue, the tool sets. */

export { throttle } from "../util/index.js";
export { argumentDepthMessage, MAX_ARGUMENT_DEPTH, nestsDeeperThan } from "./argument-depth.js";
export {
  DuplicateToolCallIdError,
  duplicateToolCallIdResults,
  duplicateToolCallIds,
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
} from "./registry.js";
export { errorResult } from "./result.js";
export {
  type PipelineContext,
  runToolCalls,
} from "./run-tool-calls.js";
export {
  checkNotAborted,
  executeTool,
  lookupTool,
  prepareToolArguments,
  runAfterToolCallHooks,
  runBeforeToolCallHooks,
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
  validateToolArguments,
} from "./validate.js";
