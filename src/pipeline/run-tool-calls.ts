/**
 * Batch execution (Pi's agent loop, shared/reference/pi-tool-semantics.md): parallel by default —
 * preflight (start event, lookup, prepare, validate, beforeToolCall) in source order, then the prepared
 * calls execute concurrently; sequential when any tool in the batch says so. Results come back in call
 * order; end events in completion order. Nothing throws out of runToolCalls.
 */
import type { Sandbox } from "../sandbox/types.js";
import type { RunToolCallsOptions } from "../session/types.js";
import type { AnyTool, SpillStore, ToolCall, ToolOutput, ToolResultMessage } from "../tools/types.js";
import { type FileMutationQueue, mutationKey } from "./mutation-queue.js";
import { resultMessage, thrownResult } from "./result.js";
import {
  checkNotAborted,
  type ExecutionOutcome,
  executeTool,
  lookupTool,
  prepareToolArguments,
  runAfterToolCallHooks,
  runBeforeToolCallHooks,
  type StageOutcome,
  validateArguments,
} from "./stages.js";
import { throttle } from "./throttle.js";
import type { AfterToolCallHook, BeforeToolCallHook, ToolExecutionEvent } from "./types.js";

/** Everything a batch runs against: the enabled tools, the sandbox, spill store, hooks and the queue. */
export interface PipelineContext {
  /** Enabled tools by name; a call to any other name is "Tool <name> not found". */
  tools: ReadonlyMap<string, AnyTool>;
  sandbox: Sandbox;
  spill: SpillStore;
  sessionId: string;
  beforeToolCall?: readonly BeforeToolCallHook[];
  afterToolCall?: readonly AfterToolCallHook[];
  /** Shared by every batch of a session, so edits of one file never interleave. */
  mutationQueue: FileMutationQueue;
  /** Minimum gap between update events of one call, in ms. Default 100 (10 per second). */
  updateIntervalMs?: number;
}

/**
 * A call that passed preflight, with its validated (possibly hook-replaced) arguments and its
 * mutation-queue key, resolved in preflight (source order) so the queue keeps the calls' order.
 */
interface PreparedCall {
  call: ToolCall;
  tool: AnyTool;
  args: unknown;
  mutationKey?: string;
}

type Emit = (event: ToolExecutionEvent) => void;

function safeEmitter(onEvent: RunToolCallsOptions["onEvent"]): Emit {
  return (event) => {
    try {
      onEvent?.(event);
    } catch {
      // A failing observer never breaks a call.
    }
  };
}

/** True when any call in the batch names a tool whose executionMode is "sequential". */
export function isSequentialBatch(calls: readonly ToolCall[], tools: ReadonlyMap<string, AnyTool>): boolean {
  return calls.some((call) => tools.get(call.name)?.executionMode === "sequential");
}

/** Stages 1–5 for one call: start event, then lookup, prepare, validate, beforeToolCall. */
export async function preflightCall(
  call: ToolCall,
  ctx: PipelineContext,
  signal: AbortSignal | undefined,
  emit: Emit,
): Promise<StageOutcome<PreparedCall>> {
  emit({ type: "tool_execution_start", toolCallId: call.id, toolName: call.name, args: call.arguments });
  const notAborted = checkNotAborted(call, signal);
  if (!notAborted.ok) return notAborted;
  const found = lookupTool(call, ctx.tools);
  if (!found.ok) return found;
  const tool = found.value;
  const prepared = prepareToolArguments(call, tool);
  if (!prepared.ok) return prepared;
  const valid = validateArguments(call, tool, prepared.value);
  if (!valid.ok) return valid;
  const hooked = await runBeforeToolCallHooks(call, tool, valid.value, ctx.beforeToolCall ?? [], {
    sandbox: ctx.sandbox,
    sessionId: ctx.sessionId,
    signal,
  });
  if (!hooked.ok) return hooked;
  const key = await mutationKey(tool, hooked.value, ctx.sandbox, signal);
  return { ok: true, value: { call, tool, args: hooked.value, mutationKey: key } };
}

/** Stages 6–8 for one prepared call: abort check, execute (in the mutation queue), afterToolCall. */
export async function executePreparedCall(
  prepared: PreparedCall,
  ctx: PipelineContext,
  signal: AbortSignal | undefined,
  emit: Emit,
): Promise<ToolResultMessage> {
  const { call, tool, args, mutationKey: key } = prepared;
  const notAborted = checkNotAborted(call, signal);
  if (!notAborted.ok) return notAborted.result;
  const updates = throttle<ToolOutput>(
    (partial) => emit({ type: "tool_execution_update", toolCallId: call.id, toolName: call.name, partial }),
    ctx.updateIntervalMs ?? 100,
  );
  const run = (): Promise<ExecutionOutcome> =>
    executeTool(call, tool, args, {
      sandbox: ctx.sandbox,
      spill: ctx.spill,
      signal,
      onUpdate: (partial) => updates.push(partial),
    });
  let outcome: ExecutionOutcome;
  try {
    // Enqueued synchronously: calls reach the queue in source order (Pi's withFileMutationQueue).
    outcome = key === undefined ? await run() : await ctx.mutationQueue.run(key, run);
  } finally {
    updates.flush();
  }
  const final = await runAfterToolCallHooks(call, tool, args, outcome, ctx.afterToolCall ?? [], signal);
  return resultMessage(call, final.output, final.isError);
}

/**
 * Runs one batch (one assistant message's tool calls). Returns one ToolResultMessage per call, in call
 * order. One AbortSignal reaches every running call; calls not yet started end "Operation aborted".
 */
export async function runToolCalls(
  calls: readonly ToolCall[],
  ctx: PipelineContext,
  options: RunToolCallsOptions = {},
): Promise<ToolResultMessage[]> {
  const emit = safeEmitter(options.onEvent);
  const { signal } = options;
  const results: ToolResultMessage[] = new Array(calls.length);
  const finish = (index: number, result: ToolResultMessage): void => {
    results[index] = result;
    emit({ type: "tool_execution_end", toolCallId: result.toolCallId, toolName: result.toolName, result });
  };
  const runOne = async (index: number, call: ToolCall, prepared: PreparedCall): Promise<void> => {
    try {
      finish(index, await executePreparedCall(prepared, ctx, signal, emit));
    } catch (err) {
      finish(index, thrownResult(call, err, "execute"));
    }
  };

  const sequential = isSequentialBatch(calls, ctx.tools);
  const running: Promise<void>[] = [];
  for (const [index, call] of calls.entries()) {
    let pre: StageOutcome<PreparedCall>;
    try {
      pre = await preflightCall(call, ctx, signal, emit);
    } catch (err) {
      pre = { ok: false, result: thrownResult(call, err, "lookup") };
    }
    if (!pre.ok) {
      finish(index, pre.result);
      continue;
    }
    const execution = runOne(index, call, pre.value);
    if (sequential) await execution;
    else running.push(execution);
  }
  await Promise.all(running);
  return results;
}
