/**
 * `warden run`'s agent: the loop on any OpenAI-compatible model (openai SDK, streaming, tools), its
 * retry policy, the JSONL transcript, and the whole run with review (executeRun).
 */

export {
  approvalFor,
  confirmer,
  createRunLogger,
  decisionLogger,
  logEvent,
  newSessionId,
  type RunView,
  runsDir,
  sessionPatchPathFor,
  transcriptPathFor,
} from "./cli-io.js";
export {
  ModelNotConfiguredError,
  NO_MODEL_MESSAGE,
  ProviderAuthError,
  ProviderError,
  ProviderRateLimitError,
  ProviderStreamError,
} from "./errors.js";
export { DEFAULT_MAX_TURNS, runAgent } from "./loop.js";
export {
  lengthCutResult,
  orderResults,
  toAssistantMessage,
  toolResultText,
  toToolMessage,
} from "./messages.js";
export {
  type AssistantTurn,
  type ChatModel,
  type CompleteOptions,
  DEFAULT_MODEL,
  type ModelConfig,
  OpenAIChatModel,
  resolveModelConfig,
  type StreamedToolCall,
} from "./model.js";
export { loadOpenAI, type OpenAIModule } from "./openai-sdk.js";
export {
  callHeader,
  indent,
  previewText,
  renderResult,
  resultStatus,
  turnHeader,
} from "./render/format-result.js";
export { JsonView } from "./render/json-view.js";
export { TerminalView } from "./render/terminal-view.js";
export {
  DEFAULT_RETRY_POLICY,
  type RetryNotice,
  type RetryPolicy,
  retryAfterMs,
  withRetries,
} from "./retry.js";
export { patchPathFor, type ReviewStepOptions, type ReviewStepOutcome, reviewStep } from "./review-step.js";
export { type ExecuteRunOptions, type ExecuteRunOutcome, executeRun, type RunReview } from "./run-session.js";
export { defaultSystemPrompt } from "./system-prompt.js";
export {
  isChatMessage,
  type ParsedTranscript,
  parseRunTranscript,
  readRunTranscript,
  type TranscriptLine,
  type TranscriptRecord,
  TranscriptWriter,
} from "./transcript.js";
export type * from "./types.js";
