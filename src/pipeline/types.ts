/**
 * Types of the tool-call pipeline: hooks and events. Stages follow Pi's 8 call stages
 * (shared/reference/pi-tool-semantics.md); unlike Pi, arguments changed by a hook are validated again.
 */

import type { Processes } from "../process/index.js";
import type { Sandbox } from "../sandbox/index.js";
import type { AnyTool, ToolCall, ToolContent, ToolOutput, ToolResultMessage } from "../tools/index.js";

/** The final answer on one call after any approval (a policy's `ask` always ends in one of these). */
export type CallVerdict = "allow" | "deny";

/**
 * Who decided a call: the policy itself, the person asked (`user`), nobody in time (`timeout`), or
 * nobody at all because the session cannot ask (`non-interactive`: ask means deny).
 */
export type Decider = "policy" | "user" | "timeout" | "non-interactive";

/**
 * A policy decision on one call, as a beforeToolCall hook reports it (src/policy's hook does), for
 * the call's audit line (src/audit, the server's tool line) and metrics.
 */
export interface CallDecision {
  /** The final answer after any approval. */
  decision: CallVerdict;
  /** Id of the rule that decided, when a rule did. */
  rule?: string;
  decider: Decider;
  /**
   * How long the call waited for a person's answer to an `ask`, in ms (absent when nobody was
   * asked). Renderers and the server's audit take it out of the call's duration.
   */
  approvalMs?: number;
}

/** What beforeToolCall hooks see. `args` are validated; the hook must not mutate them in place. */
export interface BeforeToolCallContext {
  call: ToolCall;
  tool: AnyTool;
  args: unknown;
  sandbox: Sandbox;
  sessionId: string;
  signal?: AbortSignal;
  /**
   * Reports this call's policy decision. The decision travels with the call itself (never through a
   * map keyed by the client's toolCallId, which a client may repeat) to the afterToolCall hooks and
   * the call's `tool_execution_end` event; a later report replaces an earlier one, so when a hook
   * blocks, its own report is the one kept. Always set by the pipeline; optional so that a hook can
   * be called on its own.
   */
  noteDecision?(decision: CallDecision): void;
  /**
   * The session's background processes, when it has them: a policy looks up the process a call of
   * the process tool names (Processes.records(): the command the controller started it with).
   */
  processes?: Processes;
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
  /** The decision a beforeToolCall hook reported for this call, if any. */
  decision?: CallDecision;
}

/** Field-wise replacement of the result (no deep merge), as in Pi. */
export type AfterToolCallResult =
  | undefined
  | { content?: ToolContent[]; details?: unknown; isError?: boolean };

export type AfterToolCallHook = (ctx: AfterToolCallContext) => Promise<AfterToolCallResult>;

/**
 * Events a batch emits while it runs; `end` events come in completion order. The end event carries
 * the decision a beforeToolCall hook reported for that very call (absent when none did).
 */
export type ToolExecutionEvent =
  | { type: "tool_execution_start"; toolCallId: string; toolName: string; args: unknown }
  | { type: "tool_execution_update"; toolCallId: string; toolName: string; partial: ToolOutput }
  | {
      type: "tool_execution_end";
      toolCallId: string;
      toolName: string;
      result: ToolResultMessage;
      decision?: CallDecision;
    };

/** Which tools are enabled, as Pi's CLI flags (`--tools`, `--exclude-tools`, `--no-tools`, `--no-builtin-tools`). */
export interface ToolSelection {
  /** Strict allowlist of tool names; unknown names are an error. */
  tools?: string[];
  /** Removed after the allowlist. */
  excludeTools?: string[];
  /** No tools at all. */
  noTools?: boolean;
  /** No built-in tools (only extra registered ones). */
  noBuiltinTools?: boolean;
}

/** One JSON function definition as sent to a model (OpenAI chat `tools[]` entry). */
export interface ProviderTool {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

/** Options for one batch of tool calls. */
export interface RunToolCallsOptions {
  signal?: AbortSignal;
  onEvent?: (event: ToolExecutionEvent) => void;
}
