/** Builds the audit line of one finished tool call from its result and the policy's decision note. */
import type { ToolResultMessage } from "../tools/types.js";
import type { ToolAuditEntry } from "./audit.js";

/**
 * `bytes` is the UTF-8 size of the text content plus the decoded size of image content;
 * `exitCode` comes from `details.exitCode` when the tool reports one (bash).
 */
export function toolAuditEntry(input: {
  tenant: string;
  session: string;
  result: ToolResultMessage;
  note?: { decision: string; rule?: string; decider: string } | undefined;
  durationMs: number;
}): ToolAuditEntry {
  const { result, note } = input;
  let bytes = 0;
  for (const c of result.content) {
    bytes += c.type === "text" ? Buffer.byteLength(c.text, "utf8") : Math.floor((c.data.length * 3) / 4);
  }
  const details = result.details as { exitCode?: unknown } | undefined;
  const exitCode = typeof details?.exitCode === "number" ? details.exitCode : undefined;
  return {
    kind: "tool",
    tenant: input.tenant,
    session: input.session,
    tool: result.toolName,
    toolCallId: result.toolCallId,
    decision: note?.decision ?? "run",
    ...(note?.rule ? { rule: note.rule } : {}),
    decider: note?.decider ?? "none",
    isError: result.isError,
    ...(exitCode === undefined ? {} : { exitCode }),
    bytes,
    durationMs: input.durationMs,
  };
}
