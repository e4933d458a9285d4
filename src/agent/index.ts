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
  sessionPatchPathFor,
  transcriptPathFor,
} from "./cli-io.js";
export { ModelNotConfiguredError } from "./errors.js";
export { DEFAULT_MAX_TURNS } from "./loop.js";

export {
  OpenAIChatModel,
  resolveModelConfig,
} from "./model.js";
export { loadOpenAI } from "./openai-sdk.js";
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

export { patchPathFor, reviewStep } from "./review-step.js";
export { executeRun } from "./run-session.js";

export {
  parseRunTranscript,
  readRunTranscript,
  type TranscriptRecord,
  TranscriptWriter,
} from "./transcript.js";
export type * from "./types.js";
