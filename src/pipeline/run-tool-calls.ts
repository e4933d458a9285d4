/**
 * Batch execution (Pi's agent loop, shared/reference/pi-tool-semantics.md): parallel by default —
 * every call's preflight (start event, lookup, prepare, validate, beforeToolCall) starts in source
 * order at once, and each call executes as soon as its own preflight is done (unlike Pi, whose
 * preflights run one after another, so a call waiting for an approval held up the whole batch);
 * calls that may mutate a file start in call order among themselves, so the mutation queue keeps
 * Pi's per-file order. Sequential when any tool in the batch says so. Results come back in call
 * order; end events in completion order. Nothing throws out of runToolCalls.
 * Unlike Pi, a batch whose tool-call ids repeat is refused whole (see batch-ids.ts).
 */
import type { Processes } from "../process/index.js";
import type { Sandbox } from "../sandbox/index.js";
import type { AnyTool, SpillStore, ToolCall, ToolOutput, ToolResultMessage } from "../tools/index.js";
import { type AbortFanOut, abortFanOut, omitUndefined, throttle } from "../util/index.js";
import { duplicateToolCallIdResults, duplicateToolCallIds } from "./batch-ids.js";
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
import type {
  AfterToolCallHook,
  BeforeToolCallHook,
  CallDecision,
  RunToolCallsOptions,
  ToolExecutionEvent,
} from "./types.js";

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
  /** The session's background processes, for the process tool and the hooks that judge it. */
  processes?: Processes;
}

/**
 * What travels with one call through its stages, from beforeToolCall to the afterToolCall hooks and
 * the end event: the decision a hook reported (never looked up by the client's toolCallId).
 */
interface CallRecord {
  decision?: CallDecision;
}

/** A call that passed preflight, with its validated (possibly hook-replaced) arguments and its record. */
interface PreparedCall {
  call: ToolCall;
  tool: AnyTool;
  args: unknown;
  record: CallRecord;
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
function isSequentialBatch(calls: readonly ToolCall[], tools: ReadonlyMap<string, AnyTool>): boolean {
  return calls.some((call) => tools.get(call.name)?.executionMode === "sequential");
}

/**
 * Stages 1–5 for one call: start event, then lookup, prepare, validate, beforeToolCall. A decision a
 * hook reports goes into `record` (also when the hook blocks the call).
 */
async function preflightCall(
  call: ToolCall,
  ctx: PipelineContext,
  signal: AbortSignal | undefined,
  emit: Emit,
  record: CallRecord = {},
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
    ...omitUndefined({ signal, processes: ctx.processes }),
    noteDecision: (decision) => {
      record.decision = { ...decision };
    },
  });
  if (!hooked.ok) return hooked;
  return { ok: true, value: { call, tool, args: hooked.value, record } };
}

/**
 * Stages 6–8 for one prepared call: abort check, execute (in the mutation queue), afterToolCall.
 * An edit or write takes its place in the mutation queue synchronously, before this function's first
 * await, so calls started in call order keep call order per file (as Pi's queue, whose key is taken
 * synchronously), although their keys resolve inside the sandbox in any order.
 */
async function executePreparedCall(
  prepared: PreparedCall,
  ctx: PipelineContext,
  signal: AbortSignal | undefined,
  emit: Emit,
): Promise<ToolResultMessage> {
  const { call, tool, args, record } = prepared;
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
      ...omitUndefined({ signal, processes: ctx.processes }),
      onUpdate: (partial) => updates.push(partial),
    });
  let outcome: ExecutionOutcome;
  try {
    const key = mutationKey(tool, args, ctx.sandbox, signal);
    outcome = await (key === undefined ? run() : ctx.mutationQueue.runInOrder(key, run));
  } finally {
    updates.flush();
  }
  const final = await runAfterToolCallHooks(
    call,
    tool,
    args,
    outcome,
    ctx.afterToolCall ?? [],
    signal,
    record.decision,
  );
  return resultMessage(call, final.output, final.isError);
}

/**
 * Runs one batch (one assistant message's tool calls). Returns one ToolResultMessage per call, in call
 * order. The batch's AbortSignal reaches every running call (each through its own child signal, so the
 * batch's carries one listener however large the batch); calls not yet started end "Operation aborted".
 * A batch whose tool-call ids repeat runs nothing: every call gets the same error result naming the
 * repeated ids (details `{stage: "batch", code: "INVALID_ARGUMENT", duplicateToolCallIds}`), with a
 * start and an end event each.
 */
export async function runToolCalls(
  calls: readonly ToolCall[],
  ctx: PipelineContext,
  options: RunToolCallsOptions = {},
): Promise<ToolResultMessage[]> {
  const emit = safeEmitter(options.onEvent);
  const results: ToolResultMessage[] = new Array(calls.length);
  const records: CallRecord[] = calls.map(() => ({}));
  const finish = (index: number, result: ToolResultMessage): void => {
    results[index] = result;
    const decision = records[index]?.decision;
    emit({
      type: "tool_execution_end",
      toolCallId: result.toolCallId,
      toolName: result.toolName,
      result,
      ...(decision ? { decision } : {}),
    });
  };

  const duplicates = duplicateToolCallIds(calls);
  if (duplicates.length > 0) {
    const refused = duplicateToolCallIdResults(calls, duplicates);
    for (const [index, call] of calls.entries()) {
      emit({ type: "tool_execution_start", toolCallId: call.id, toolName: call.name, args: call.arguments });
      finish(index, refused[index] as ToolResultMessage);
    }
    return results;
  }

  // Each call listens on its own signal; the batch's gets one listener however large the batch.
  const fanOut = abortFanOut(options.signal);
  try {
    return await runBatch({ calls, ctx, fanOut, emit, records, finish, results });
  } finally {
    fanOut.dispose();
  }
}

/** One batch as runBatch runs it: its calls (past the id check) and where their outcomes go. */
interface BatchRun {
  calls: readonly ToolCall[];
  ctx: PipelineContext;
  /** Gives each call its own child of the batch's signal. */
  fanOut: AbortFanOut;
  emit: (event: ToolExecutionEvent) => void;
  /** What travels with each call (its policy decision), in call order. */
  records: CallRecord[];
  /** Stores a call's result at its index and emits its end event. */
  finish: (index: number, result: ToolResultMessage) => void;
  /** The results in call order, filled by `finish`; the value runBatch resolves. */
  results: ToolResultMessage[];
}

/** The calls of a batch that passed the id check, each with its own signal from `fanOut`. */
async function runBatch(run: BatchRun): Promise<ToolResultMessage[]> {
  const { calls, ctx, fanOut, emit, records, finish, results } = run;
  const signals = calls.map(() => fanOut.child());
  const runOne = async (index: number, call: ToolCall, prepared: PreparedCall): Promise<void> => {
    try {
      finish(index, await executePreparedCall(prepared, ctx, signals[index], emit));
    } catch (err) {
      finish(index, thrownResult(call, err, "execute"));
    }
  };

  const preflight = async (index: number, call: ToolCall): Promise<StageOutcome<PreparedCall>> => {
    try {
      return await preflightCall(call, ctx, signals[index], emit, records[index]);
    } catch (err) {
      return { ok: false, result: thrownResult(call, err, "lookup") };
    }
  };
  const running: Promise<void>[] = [];
  if (isSequentialBatch(calls, ctx.tools)) {
    for (const [index, call] of calls.entries()) {
      const pre = await preflight(index, call);
      if (pre.ok) await runOne(index, call, pre.value);
      else finish(index, pre.result);
    }
    return results;
  }
  // Every call's preflight (hooks, approvals) starts at once, so the asks of a batch are put together
  // and a call already allowed runs without waiting for an answer about another. Only calls that may
  // mutate a file start in call order among themselves (each reaches the mutation queue before its
  // first await, after every earlier one): per-file order stays Pi's.
  let mutations: Promise<unknown> = Promise.resolve();
  for (const [index, call] of calls.entries()) {
    const pre = preflight(index, call);
    const start = (outcome: StageOutcome<PreparedCall>): void => {
      if (outcome.ok) running.push(runOne(index, call, outcome.value));
      else finish(index, outcome.result);
    };
    if (ctx.tools.get(call.name)?.mutatesPath === undefined) running.push(pre.then(start));
    else {
      mutations = mutations.then(() => pre).then(start);
      running.push(mutations.then(() => undefined));
    }
  }
  // Links pushed later (a started call) are awaited too.
  for (let i = 0; i < running.length; i++) await running[i];
  return results;
}
