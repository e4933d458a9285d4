/**
 * Tool-call ids within one batch must be unique: results, events, approvals, spill placeholders and
 * audit lines all name a call by its id, so a repeated id would let one call's answer pass for
 * another's. A batch whose ids repeat is refused whole: every call gets the same error result and
 * none runs (no hook, no tool), so the model re-issues the calls with distinct ids. `warden serve`
 * answers such a batch with HTTP 400 (DuplicateToolCallIdError) before anything runs.
 */
import { InvalidArgumentError } from "../errors.js";
import type { ToolCall, ToolResultMessage } from "../tools/index.js";
import { errorResult, type PipelineErrorDetails } from "./result.js";

/** Ids that occur more than once in `calls`, each listed once, in order of first occurrence. */
export function duplicateToolCallIds(calls: readonly Pick<ToolCall, "id">[]): string[] {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const { id } of calls) {
    if (seen.has(id)) repeated.add(id);
    seen.add(id);
  }
  return [...repeated];
}

/** The text of the refusal, naming every repeated id, e.g. `Tool call id 'call_0' appears more than once…`. */
function duplicateToolCallIdsText(ids: readonly string[]): string {
  const named = ids.map((id) => `'${id}'`).join(", ");
  const subject = ids.length === 1 ? `Tool call id ${named} appears` : `Tool call ids ${named} appear`;
  return (
    `${subject} more than once in this batch; every call of a batch needs its own id. ` +
    "No call of the batch was run: re-issue the calls with distinct ids."
  );
}

/** Details of a refused batch's error results: the stage, the code and the repeated ids. */
export interface DuplicateIdDetails extends PipelineErrorDetails {
  stage: "batch";
  code: "INVALID_ARGUMENT";
  duplicateToolCallIds: string[];
}

/** One error result per call of a batch whose ids repeat (`ids` from duplicateToolCallIds), in call order. */
export function duplicateToolCallIdResults(
  calls: readonly ToolCall[],
  ids: readonly string[],
): ToolResultMessage<DuplicateIdDetails>[] {
  const text = duplicateToolCallIdsText(ids);
  return calls.map((call) =>
    errorResult<DuplicateIdDetails>(call, text, {
      stage: "batch",
      code: "INVALID_ARGUMENT",
      duplicateToolCallIds: [...ids],
    }),
  );
}

/** A batch whose tool-call ids repeat (HTTP 400 INVALID_ARGUMENT); `ids` are the repeated ids. */
export class DuplicateToolCallIdError extends InvalidArgumentError {
  constructor(readonly ids: readonly string[]) {
    super(duplicateToolCallIdsText(ids));
  }
}
