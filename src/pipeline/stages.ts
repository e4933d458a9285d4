/**
 * The per-call stages, as plain named functions in call order (Pi's stages, shared/reference/
 * pi-tool-semantics.md): lookupTool -> prepareToolArguments -> validateArguments ->
 * runBeforeToolCallHooks -> checkNotAborted -> executeTool -> runAfterToolCallHooks.
 * No stage throws: a failure is an isError ToolResultMessage (or an isError output after execute).
 */
import type { Processes } from "../process/index.js";
import type { Sandbox } from "../sandbox/index.js";
import type { AnyTool, ToolCall, ToolContext, ToolOutput, ToolResultMessage } from "../tools/index.js";
import { cloneSharingStrings, isAbortError, omitUndefined } from "../util/index.js";
import { errorResult, errorText, normaliseOutput, type PipelineStage, thrownResult } from "./result.js";
import type { AfterToolCallHook, BeforeToolCallHook, CallDecision } from "./types.js";
import { validateToolArguments } from "./validate.js";

/** A stage either passes a value on or ends the call with an error result. */
export type StageOutcome<T> = { ok: true; value: T } | { ok: false; result: ToolResultMessage };

/** An executed call's output and whether it is an error (before normalisation into a message). */
export interface ExecutionOutcome {
  output: ToolOutput;
  isError: boolean;
}

/** Stage 2: finds the tool by exact name among the enabled tools. Miss: "Tool <name> not found" (Pi). */
export function lookupTool(call: ToolCall, tools: ReadonlyMap<string, AnyTool>): StageOutcome<AnyTool> {
  const tool = tools.get(call.name);
  if (tool) return { ok: true, value: tool };
  return {
    ok: false,
    result: errorResult(call, `Tool ${call.name} not found`, { stage: "lookup", code: "NOT_FOUND" }),
  };
}

/** Stage 3: the tool's prepareArguments (legacy shapes), if it has one. A throw is an error result. */
export function prepareToolArguments(call: ToolCall, tool: AnyTool): StageOutcome<unknown> {
  if (!tool.prepareArguments) return { ok: true, value: call.arguments };
  try {
    return { ok: true, value: tool.prepareArguments(call.arguments) };
  } catch (err) {
    return { ok: false, result: thrownResult(call, err, "prepareArguments") };
  }
}

/** Stage 4: typebox validation with coercion (see validate.ts); failure text is Pi's. */
export function validateArguments(
  call: ToolCall,
  tool: AnyTool,
  args: unknown,
  stage: PipelineStage = "validate",
): StageOutcome<unknown> {
  const outcome = validateToolArguments(tool, args);
  if (outcome.ok) return { ok: true, value: outcome.args };
  return { ok: false, result: errorResult(call, outcome.message, { stage, code: "INVALID_ARGUMENT" }) };
}

/**
 * A deep clone whose objects and arrays are all frozen: what hooks see, so they cannot mutate args.
 * Strings are shared, as validation's copy shares them (cloneSharingStrings).
 */
function frozenClone<T>(value: T): T {
  const copy = cloneSharingStrings(value);
  const freeze = (v: unknown): void => {
    if (typeof v !== "object" || v === null || Object.isFrozen(v)) return;
    Object.freeze(v);
    for (const child of Object.values(v)) freeze(child);
  };
  freeze(copy);
  return copy;
}

/** What beforeToolCall hooks are given besides the call (see BeforeToolCallContext). */
export interface HookEnvironment {
  sandbox: Sandbox;
  sessionId: string;
  signal?: AbortSignal;
  /** Where a hook reports the call's decision (the call's own record; see BeforeToolCallContext). */
  noteDecision?(decision: CallDecision): void;
  /** The session's background processes (see BeforeToolCallContext). */
  processes?: Processes;
}

/**
 * Stage 5: beforeToolCall hooks in order. The first block wins (reason, or "Tool execution was
 * blocked"); a throwing hook blocks (fail closed). Hooks get a frozen clone of the arguments, so an
 * in-place mutation throws (and blocks) instead of reaching execute; replacement arguments a hook
 * returns are validated again (unlike Pi) and the next hooks see them.
 */
export async function runBeforeToolCallHooks(
  call: ToolCall,
  tool: AnyTool,
  args: unknown,
  hooks: readonly BeforeToolCallHook[],
  env: HookEnvironment,
): Promise<StageOutcome<unknown>> {
  let current = args;
  for (const hook of hooks) {
    let answer: Awaited<ReturnType<BeforeToolCallHook>>;
    try {
      answer = await hook({ call, tool, args: frozenClone(current), ...env });
    } catch (err) {
      const text = `Tool call blocked: a beforeToolCall hook failed: ${errorText(err)}`;
      return { ok: false, result: errorResult(call, text, { stage: "beforeToolCall" }) };
    }
    if (!answer) continue;
    if ("block" in answer && answer.block) {
      const reason = answer.reason || "Tool execution was blocked";
      return { ok: false, result: errorResult(call, reason, { stage: "beforeToolCall" }) };
    }
    if ("args" in answer) {
      const revalidated = validateArguments(call, tool, answer.args, "beforeToolCall");
      if (!revalidated.ok) return revalidated;
      current = revalidated.value;
    }
  }
  return { ok: true, value: current };
}

/** Stage 6: a call whose signal already fired does not start: "Operation aborted" (Pi). */
export function checkNotAborted(call: ToolCall, signal: AbortSignal | undefined): StageOutcome<void> {
  if (!signal?.aborted) return { ok: true, value: undefined };
  return { ok: false, result: errorResult(call, "Operation aborted", { stage: "abort", code: "ABORTED" }) };
}

/**
 * Stage 7: runs the tool. A throw becomes an isError output with the message; a thrown WardenError
 * keeps its code in details (Pi loses details); an abort reads "Operation aborted".
 */
export async function executeTool(
  call: ToolCall,
  tool: AnyTool,
  args: unknown,
  ctx: ToolContext,
): Promise<ExecutionOutcome> {
  try {
    const raw = await tool.execute(call.id, args, ctx);
    try {
      return { output: normaliseOutput(raw), isError: false };
    } catch (err) {
      const failed = thrownResult(call, err, "normalise");
      return { output: { content: failed.content, details: failed.details }, isError: true };
    }
  } catch (err) {
    const failed =
      isAbortError(err) && ctx.signal?.aborted
        ? errorResult(call, "Operation aborted", { stage: "execute", code: "ABORTED" })
        : thrownResult(call, err, "execute");
    return { output: { content: failed.content, details: failed.details }, isError: true };
  }
}

/**
 * Stage 8: afterToolCall hooks in order, each seeing the previous one's result and the decision a
 * beforeToolCall hook reported for this call. A hook's answer replaces content, details and isError
 * field by field (no deep merge, as Pi); a throw makes the call an error result naming the hook failure.
 */
export async function runAfterToolCallHooks(
  call: ToolCall,
  tool: AnyTool,
  args: unknown,
  outcome: ExecutionOutcome,
  hooks: readonly AfterToolCallHook[],
  signal?: AbortSignal,
  decision?: CallDecision,
): Promise<ExecutionOutcome> {
  let current = outcome;
  for (const hook of hooks) {
    try {
      const answer = await hook({
        call,
        tool,
        args,
        output: current.output,
        isError: current.isError,
        ...omitUndefined({ signal }),
        ...(decision ? { decision } : {}),
      });
      if (!answer) continue;
      const output: ToolOutput = { ...current.output };
      if (answer.content !== undefined) output.content = answer.content;
      if ("details" in answer) output.details = answer.details;
      current = {
        output: normaliseOutput(output),
        isError: answer.isError ?? current.isError,
      };
    } catch (err) {
      const failed = thrownResult(
        call,
        new Error(`afterToolCall hook failed: ${errorText(err)}`),
        "afterToolCall",
      );
      return { output: { content: failed.content, details: failed.details }, isError: true };
    }
  }
  return current;
}
