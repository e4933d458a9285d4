/**
 * Types of the tool-call pipeline: hooks and events. Stages follow Pi's 8 call stages
 * (shared/reference/pi-tool-semantics.md); unlike Pi, arguments changed by a hook are validated again.
 */

import type { Sandbox } from "../sandbox/types.js";
import type { AnyTool, ToolCall, ToolContent, ToolOutput, ToolResultMessage } from "../tools/types.js";

/** What beforeToolCall hooks see. `args` are validated; the hook must not mutate them in place. */
export interface BeforeToolCallContext {
  call: ToolCall;
  tool: AnyTool;
  args: unknown;
  sandbox: Sandbox;
  sessionId: string;
  signal?: AbortSignal;
}

/**
 * A beforeToolCall hook's answer: nothing (go on), a block with a reason (the call becomes an isError
 * result with that reason; nothing runs), or replacement arguments (validated again before execute).
 */
export type BeforeToolCallResult = undefined | { block: true; reason: string } | { args: unknown };

export type BeforeToolCallHook = (ctx: BeforeToolCallContext) => Promise<BeforeToolCallResult>;

/** What afterToolCall hooks see: the call and its (normalised) output. */
export interface AfterToolCallContext {
  call: ToolCall;
  tool: AnyTool;
  args: unknown;
  output: ToolOutput;
  isError: boolean;
  signal?: AbortSignal;
}

/** Field-wise replacement of the result (no deep merge), as in Pi. */
export type AfterToolCallResult =
  | undefined
  | { content?: ToolContent[]; details?: unknown; isError?: boolean };

export type AfterToolCallHook = (ctx: AfterToolCallContext) => Promise<AfterToolCallResult>;

/** Events a batch emits while it runs; `end` events come in completion order. */
export type ToolExecutionEvent =
  | { type: "tool_execution_start"; toolCallId: string; toolName: string; args: unknown }
  | { type: "tool_execution_update"; toolCallId: string; toolName: string; partial: ToolOutput }
  | { type: "tool_execution_end"; toolCallId: string; toolName: string; result: ToolResultMessage };
