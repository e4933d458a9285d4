/** Types of the agent loop: its options, the events it emits while running, and its result. */
import type { ToolExecutionEvent } from "../pipeline/index.js";
import type { Session } from "../session/index.js";
import type { ToolResultMessage } from "../tools/index.js";
import type { ChatModel, StreamedToolCall } from "./model.js";
import type { RetryNotice } from "./retry.js";
import type { TranscriptWriter } from "./transcript.js";

/** Why a run stopped: the model answered without tool calls, the turn cap, Ctrl-C, or a provider error. */
type AgentStopReason = "final" | "max_turns" | "aborted" | "error";

/**
 * Events of a run, in order. Tool events are the pipeline's (start, update, end per call); the loop
 * adds the model side. `--json` prints each as one JSONL line.
 */
export type AgentEvent =
  | { type: "turn_start"; turn: number }
  | { type: "text_delta"; text: string }
  | {
      type: "assistant_message";
      turn: number;
      content: string;
      toolCalls: StreamedToolCall[];
      finishReason: string | null;
    }
  | ({ type: "model_retry" } & RetryNotice)
  | { type: "tool_calls_not_run"; reason: "length"; results: ToolResultMessage[] }
  | ToolExecutionEvent
  | { type: "agent_end"; stopReason: AgentStopReason; turns: number; finalText: string; error?: string };

/** Options of runAgent. */
export interface RunAgentOptions {
  session: Pick<Session, "id" | "providerTools" | "runToolCalls">;
  model: ChatModel;
  task: string;
  /** Default: defaultSystemPrompt(). */
  systemPrompt?: string;
  /** Model calls at most. Default 50. */
  maxTurns?: number;
  /** Ctrl-C: aborts the model request or the running tools; the run ends with stopReason "aborted". */
  signal?: AbortSignal;
  onEvent?: (event: AgentEvent) => void;
  transcript?: TranscriptWriter;
}

/** How a run ended. `error` is set (the provider error) when stopReason is "error". */
export interface AgentResult {
  stopReason: AgentStopReason;
  turns: number;
  /** The last assistant text. */
  finalText: string;
  error?: unknown;
}
