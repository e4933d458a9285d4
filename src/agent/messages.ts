/**
 * Conversions between warden's tool types and OpenAI chat messages (the wire shape a model and the
 * transcript both use).
 */
import type {
  ChatCompletionAssistantMessageParam,
  ChatCompletionToolMessageParam,
} from "openai/resources/chat/completions";
import type { ToolCall, ToolResultMessage } from "../tools/index.js";
import type { AssistantTurn, StreamedToolCall } from "./model.js";

/**
 * A streamed call as a warden ToolCall: arguments parsed from JSON, or left as the raw string when
 * they are not valid JSON (the pipeline's validation stage then reports it to the model). An empty
 * string counts as `{}`, as some servers send no argument text for parameterless calls.
 */
export function toToolCall(call: StreamedToolCall): ToolCall {
  if (call.arguments.trim() === "") return { id: call.id, name: call.name, arguments: {} };
  try {
    return { id: call.id, name: call.name, arguments: JSON.parse(call.arguments) as unknown };
  } catch {
    return { id: call.id, name: call.name, arguments: call.arguments };
  }
}

/** The assistant message to send back (and to record): OpenAI shape, tool_calls only when present. */
export function toAssistantMessage(turn: AssistantTurn): ChatCompletionAssistantMessageParam {
  const message: ChatCompletionAssistantMessageParam = { role: "assistant", content: turn.content || null };
  if (turn.toolCalls.length > 0) {
    message.tool_calls = turn.toolCalls.map((call) => ({
      id: call.id,
      type: "function",
      function: { name: call.name, arguments: call.arguments },
    }));
  }
  return message;
}

/**
 * The text a model sees for one result: text blocks joined by newlines; images (which OpenAI tool
 * messages cannot carry) as a one-line note; "(no output)" when empty.
 */
function toolResultText(result: ToolResultMessage): string {
  const parts = result.content.map((block) =>
    block.type === "text"
      ? block.text
      : `[image ${block.mimeType}, ${block.data.length} base64 chars omitted]`,
  );
  const text = parts.join("\n");
  return text === "" ? "(no output)" : text;
}

/** One `tool` message for a result, with its tool_call_id. */
export function toToolMessage(result: ToolResultMessage): ChatCompletionToolMessageParam {
  return { role: "tool", tool_call_id: result.toolCallId, content: toolResultText(result) };
}

/**
 * An isError result made by the agent loop itself (length cut-off, missing result). The pipeline's
 * own refusals are pipeline/result.ts's `errorResult`, which carries `PipelineErrorDetails`.
 */
export function loopErrorResult(call: { id: string; name: string }, text: string): ToolResultMessage {
  return {
    role: "toolResult",
    toolCallId: call.id,
    toolName: call.name,
    content: [{ type: "text", text }],
    isError: true,
    timestamp: Date.now(),
  };
}

/**
 * Pi's answer to calls in a message cut off by the output limit (stopReason "length"): none runs and
 * each gets this error so the model re-issues it.
 */
export function lengthCutResult(call: { id: string; name: string }): ToolResultMessage {
  return loopErrorResult(
    call,
    `Tool call ${call.name} was not run: the response hit the output token limit (finish_reason "length"), ` +
      "so its arguments may be incomplete. Re-issue the call, with shorter arguments if needed.",
  );
}

/**
 * Puts results in the order of `calls`, whatever order they came in; a call with no result gets
 * Pi's synthetic "No result provided" error so the protocol stays complete. A result already at its
 * call's position is kept there, so calls sharing a repeated id (a refused batch) keep their own.
 */
export function orderResults(calls: ToolCall[], results: ToolResultMessage[]): ToolResultMessage[] {
  const byId = new Map(results.map((r) => [r.toolCallId, r]));
  return calls.map((call, index) => {
    const atPosition = results[index];
    if (atPosition?.toolCallId === call.id) return atPosition;
    return byId.get(call.id) ?? loopErrorResult(call, "No result provided");
  });
}
