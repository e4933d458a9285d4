/**
 * The agent loop of `warden run`, after Pi's agent loop: ask the model, run the assistant message's tool
 * calls as one batch through the session, send the results back as `tool` messages in call order,
 * repeat until the model answers without calls, the turn cap, or an abort.
 */
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";
import type { ToolResultMessage } from "../tools/index.js";
import { isAbortError, omitUndefined } from "../util/index.js";
import {
  lengthCutResult,
  loopErrorResult,
  orderResults,
  toAssistantMessage,
  toToolCall,
  toToolMessage,
} from "./messages.js";
import { defaultSystemPrompt } from "./system-prompt.js";
import type { AgentEvent, AgentResult, RunAgentOptions } from "./types.js";

/** Default cap on model calls per run. */
export const DEFAULT_MAX_TURNS = 50;

/**
 * Runs the loop. Never throws for tool failures (they are results) nor for provider errors (the
 * result has stopReason "error" and `error`); the caller owns and closes the session.
 */
export async function runAgent(options: RunAgentOptions): Promise<AgentResult> {
  const { session, model, signal, transcript } = options;
  const emit = (event: AgentEvent) => options.onEvent?.(event);
  const tools = session.providerTools();
  const maxTurns = options.maxTurns ?? DEFAULT_MAX_TURNS;
  const messages: ChatCompletionMessageParam[] = [];
  const push = (message: ChatCompletionMessageParam) => {
    messages.push(message);
    transcript?.write(message);
  };
  push({
    role: "system",
    content: options.systemPrompt ?? defaultSystemPrompt(tools.map((t) => t.function.name)),
  });
  push({ role: "user", content: options.task });

  let turns = 0;
  let finalText = "";
  const end = (stopReason: AgentResult["stopReason"], error?: unknown): AgentResult => {
    const message = error instanceof Error ? error.message : error === undefined ? undefined : String(error);
    emit({ type: "agent_end", stopReason, turns, finalText, ...(message ? { error: message } : {}) });
    return { stopReason, turns, finalText, ...(error === undefined ? {} : { error }) };
  };

  while (turns < maxTurns) {
    if (signal?.aborted) return end("aborted");
    turns++;
    emit({ type: "turn_start", turn: turns });
    let turn: Awaited<ReturnType<typeof model.complete>>;
    try {
      turn = await model.complete(messages, tools, {
        ...omitUndefined({ signal }),
        onTextDelta: (text) => emit({ type: "text_delta", text }),
        onRetry: (notice) => emit({ type: "model_retry", ...notice }),
      });
    } catch (err) {
      if (isAbortError(err) || signal?.aborted) return end("aborted");
      return end("error", err);
    }
    finalText = turn.content;
    emit({ type: "assistant_message", turn: turns, ...turn });
    push(toAssistantMessage(turn));
    if (turn.toolCalls.length === 0) return end("final");

    const calls = turn.toolCalls.map(toToolCall);
    let results: ToolResultMessage[];
    if (turn.finishReason === "length") {
      results = calls.map(lengthCutResult);
      emit({ type: "tool_calls_not_run", reason: "length", results });
    } else {
      try {
        results = orderResults(
          calls,
          await session.runToolCalls(calls, { ...omitUndefined({ signal }), onEvent: emit }),
        );
      } catch (err) {
        // runToolCalls does not throw for tool errors; anything here (engine gone, abort) fails the batch.
        const text = isAbortError(err) ? "Operation aborted" : `Tool batch failed: ${String(err)}`;
        results = calls.map((call) => loopErrorResult(call, text));
      }
    }
    for (const result of results) {
      push(toToolMessage(result));
      transcript?.write({ warden: "tool_result", time: new Date().toISOString(), result });
    }
    if (signal?.aborted) return end("aborted");
  }
  return end("max_turns");
}
