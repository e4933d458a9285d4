/**
 * `warden replay <transcript.jsonl>`: replays a recorded agent run (OpenAI chat tool_calls, one
 * assistant turn per line; see src/session/replay-turns.ts) in one session, without a model. Each turn is
 * one batch; progress and each result are printed as they happen; `--out` gets the results as JSONL.
 * `{{spill:<tool_call_id>}}` in arguments is replaced by that earlier call's spill handle (`/spill/<name>`,
 * which read opens in the replay's session).
 * A turn whose tool-call ids repeat runs nothing: each of its calls gets the pipeline's duplicate-id error.
 * The policy: `--policy` when given; else the one a `warden run` transcript recorded (refused when
 * its files changed or are gone: policy-choice.ts); else the shipped default. A copy-mode replay
 * that changed files saves the patch when it ends and names it on stderr (session-patch.ts).
 * The workspace: `--workspace` when given; else the one a `warden run` transcript recorded (refused
 * when it is gone or was replaced, as `warden apply` refuses); else none (an empty /workspace).
 * Exit 0 once every turn ran (error results included), 2 for usage or engine errors, 130 when interrupted.
 */
import { existsSync } from "node:fs";
import { appendFile, readFile, writeFile } from "node:fs/promises";
import type { Command } from "commander";
import pc from "picocolors";
import {
  callHeader,
  indent,
  parseRunTranscript,
  previewText,
  renderResult,
  resultStatus,
  type TranscriptRecord,
  turnHeader,
} from "../../agent/index.js";
import { InvalidArgumentError } from "../../errors.js";
import { duplicateToolCallIdResults, duplicateToolCallIds, errorResult } from "../../pipeline/index.js";
import { isPolicyRecord, type PolicyRecord } from "../../policy/index.js";
import { checkWorkspaceRecord } from "../../review/index.js";
import {
  createSession,
  parseReplayTurns,
  type ReplayTurn,
  resolvePlaceholders,
  type Session,
  spillPathOf,
  toToolCall,
} from "../../session/index.js";
import type { ToolCall, ToolResultMessage } from "../../tools/index.js";
import { omitUndefined } from "../../util/index.js";
import { policyFromTranscript } from "../flags/policy-choice.js";
import { addSessionFlags, type SessionFlags, sessionOptionsOf } from "../flags/session-flags.js";
import { withInterrupt } from "../session/interrupt.js";
import { saveSessionChanges, startSessionPatch } from "../session/session-patch.js";

interface ReplayFlags extends SessionFlags {
  out?: string;
  full?: boolean;
}

/** Totals of a replay. */
interface ReplaySummary {
  calls: number;
  errors: number;
}

const log = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

/**
 * Resolves placeholders; a call naming an unknown spill gets an error result instead of running. When
 * the turn's ids repeat, every call gets the duplicate-id error (as runToolCalls gives) and none runs.
 */
function prepareTurn(
  turn: ReplayTurn,
  spills: ReadonlyMap<string, string>,
): { calls: ToolCall[]; failed: Map<number, ToolResultMessage> } {
  const repeated = duplicateToolCallIds(turn.calls);
  if (repeated.length > 0) {
    const calls = turn.calls.map(toToolCall);
    return { calls, failed: new Map(duplicateToolCallIdResults(calls, repeated).entries()) };
  }
  const calls: ToolCall[] = [];
  const failed = new Map<number, ToolResultMessage>();
  for (const [index, recorded] of turn.calls.entries()) {
    const { text, missing } = resolvePlaceholders(recorded.argumentsText, (id) => spills.get(id));
    const call = toToolCall({ ...recorded, argumentsText: text });
    calls.push(call);
    if (missing.length > 0) {
      const ids = missing.map((id) => `{{spill:${id}}}`).join(", ");
      const message = `${ids}: no earlier call of this replay with that id produced a spill file.`;
      failed.set(index, errorResult(call, message, { stage: "prepareArguments", code: "INVALID_ARGUMENT" }));
    }
  }
  return { calls, failed };
}

async function replayTurn(
  session: Session,
  turn: ReplayTurn,
  number: number,
  spills: Map<string, string>,
  signal: AbortSignal,
  full: boolean,
): Promise<ToolResultMessage[]> {
  log(turnHeader(number, turn.line, turn.content));
  const { calls, failed } = prepareTurn(turn, spills);
  const runnable = calls.filter((_, i) => !failed.has(i));
  const position = new Map(calls.map((call, i) => [call.id, i + 1]));
  const startedAt = new Map<string, number>();
  const show = (result: ToolResultMessage, approvalMs?: number): void => {
    const durationMs = Date.now() - (startedAt.get(result.toolCallId) ?? Date.now());
    log(`  ${resultStatus(result, durationMs, approvalMs)}`);
    const text = renderResult(result);
    log(indent(full ? text.replace(/\n+$/, "") : previewText(text), "    │ "));
  };
  for (const [i, result] of failed) {
    log(`  ${callHeader(i + 1, calls[i] as ToolCall)}`);
    show(result);
  }
  const ran = await session.runToolCalls(runnable, {
    signal,
    onEvent: (event) => {
      if (event.type === "tool_execution_start") {
        startedAt.set(event.toolCallId, Date.now());
        const call = runnable.find((c) => c.id === event.toolCallId);
        if (call) log(`  ${callHeader(position.get(call.id) ?? 0, call)}`);
      } else if (event.type === "tool_execution_end") show(event.result, event.decision?.approvalMs);
    },
  });
  const results: ToolResultMessage[] = [];
  let next = 0;
  for (let i = 0; i < calls.length; i++) {
    const result = failed.get(i) ?? ran[next++];
    if (!result) continue;
    results.push(result);
    const spill = spillPathOf(result);
    if (spill) spills.set(result.toolCallId, spill);
  }
  return results;
}

type RunStart = Extract<TranscriptRecord, { warden: "run_start" }>;

/** A `warden run` transcript's run_start record, if it has one (its text as read). */
function runStartOf(text: string, file: string): RunStart | undefined {
  const start = parseRunTranscript(asJsonl(text), file).records.find((r) => r.warden === "run_start");
  return start?.warden === "run_start" ? start : undefined;
}

/** The policy a run_start recorded, if any. */
function recordedPolicy(start: RunStart | undefined): PolicyRecord | undefined {
  return start && isPolicyRecord(start.policy) ? start.policy : undefined;
}

/**
 * The workspace to replay in when `--workspace` is not given: the host directory a `warden run`
 * transcript's run_start recorded, so the calls meet the files they met in the run. Rejects
 * WorkspaceMovedError when that directory is gone or another one is at its path now (device and inode
 * differ; the same check as `warden apply`; a run in ro or rw mode records no identity: then
 * InvalidArgumentError when it is gone), naming `--workspace DIR`. Undefined for a transcript
 * without one (the session then has an empty workspace).
 */
async function recordedWorkspace(start: RunStart | undefined, file: string): Promise<string | undefined> {
  if (!start?.workspace) return undefined;
  if (start.workspaceId)
    await checkWorkspaceRecord({ path: start.workspace, ...start.workspaceId }, file, "replay");
  else if (!existsSync(start.workspace))
    throw new InvalidArgumentError(
      `${file} records the workspace ${start.workspace}, but it is gone. Nothing ran. To replay it in another directory, name it: warden replay ${file} --workspace DIR.`,
    );
  process.stderr.write(
    `warden: workspace: ${start.workspace}, as ${file} recorded; choose another with --workspace DIR\n`,
  );
  return start.workspace;
}

/** A `{"messages": [...]}` export as JSONL (one message per line); any other text as it is. */
export function asJsonl(text: string): string {
  const trimmed = text.trim();
  if (trimmed.startsWith("{")) {
    try {
      const whole = JSON.parse(trimmed) as { messages?: unknown };
      if (Array.isArray(whole?.messages)) return whole.messages.map((m) => JSON.stringify(m)).join("\n");
    } catch {
      // not one JSON document: JSONL
    }
  }
  return text;
}

export async function runReplay(file: string, flags: ReplayFlags): Promise<void> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    throw new InvalidArgumentError(`Cannot read transcript '${file}': ${(err as Error).message}`);
  }
  const turns = parseReplayTurns(asJsonl(text));
  if (turns.length === 0)
    throw new InvalidArgumentError(
      text.trim() === ""
        ? `Transcript '${file}' is empty: nothing to replay.`
        : `Transcript '${file}' has no assistant message with tool_calls: nothing to replay (one JSON message per line, or {"messages": [...]}).`,
    );
  const start = runStartOf(text, file);
  const policy = await policyFromTranscript(file, recordedPolicy(start), flags.policy);
  if (!flags.workspace)
    flags = { ...flags, ...omitUndefined({ workspace: await recordedWorkspace(start, file) }) };
  if (flags.out) await writeFile(flags.out, "");
  const { value: summary, interrupted } = await withInterrupt(async (signal): Promise<ReplaySummary> => {
    const options = await sessionOptionsOf(flags, signal, undefined, policy);
    const start = await startSessionPatch(options);
    const session = await createSession(options);
    const summary: ReplaySummary = { calls: 0, errors: 0 };
    try {
      const info = session.sandbox.info;
      log(
        pc.dim(
          `session ${session.id} · container ${info.containerId.slice(0, 12)} · ${info.workspaceMode} mode`,
        ),
      );
      log(pc.dim(`tools: ${session.enabledTools.join(", ")} · ${turns.length} turns`));
      const spills = new Map<string, string>();
      for (const [i, turn] of turns.entries()) {
        if (signal.aborted) break;
        const results = await replayTurn(session, turn, i + 1, spills, signal, flags.full ?? false);
        summary.calls += results.length;
        summary.errors += results.filter((r) => r.isError).length;
        if (flags.out) await appendFile(flags.out, results.map((r) => `${JSON.stringify(r)}\n`).join(""));
      }
    } finally {
      await saveSessionChanges(session, start, signal);
      await session.close();
    }
    return summary;
  });
  if (!summary) {
    process.stderr.write("warden: interrupted before the replay started; the sandbox was removed.\n");
    process.exitCode = 130;
    return;
  }
  log(
    pc.bold(
      `\n${summary.calls} calls, ${summary.errors} error result${summary.errors === 1 ? "" : "s"}${flags.out ? `; results in ${flags.out}` : ""}; sandbox removed.`,
    ),
  );
  process.exitCode = interrupted ? 130 : 0;
}

/** Registers `warden replay`. */
export function registerReplay(program: Command): void {
  const command = program
    .command("replay")
    .description("replay a recorded transcript's tool calls (OpenAI chat JSONL) in one sandboxed session")
    .argument(
      "<transcript>",
      "JSONL file: one message per line; assistant turns with tool_calls are replayed",
    )
    .option("-o, --out <file>", "write every ToolResultMessage to this file as JSONL")
    .option("--full", "print every result in full (default: long results are shortened on screen)");
  addSessionFlags(command).action((file: string, flags: ReplayFlags) => runReplay(file, flags));
}
