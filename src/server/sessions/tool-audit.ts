/** Builds the audit line of one finished tool call from its result and the decision reported for it. */
import type { CallDecision, ToolExecutionEvent } from "../../pipeline/index.js";
import type { ToolResultMessage } from "../../tools/index.js";
import type { ServerAuditLog, ToolAuditEntry } from "../audit.js";
import type { ServerMetrics } from "../metrics.js";

/**
 * Counts one finished call (its decision, outcome and latency in seconds) and writes its audit line;
 * its policy decision comes on its own end event. `durationMs`: from its start event to its end;
 * the time it waited for an approval (CallDecision.approvalMs) is taken out of the latency and the
 * audit line's durationMs, and written as its own approvalMs.
 */
export function recordFinishedCall(
  deps: { metrics: ServerMetrics; audit: ServerAuditLog },
  call: { tenant: string; session: string; batch: string },
  event: Extract<ToolExecutionEvent, { type: "tool_execution_end" }>,
  durationMs: number,
): void {
  const { result, decision } = event;
  const { tenant } = call;
  const approvalMs = decision?.approvalMs;
  const ownMs = Math.max(0, durationMs - (approvalMs ?? 0));
  if (decision)
    deps.metrics.decisions.inc({ tenant, decision: decision.decision, decider: decision.decider });
  const outcome = result.isError ? "error" : "ok";
  deps.metrics.toolCalls.inc({ tenant, tool: result.toolName, outcome });
  deps.metrics.toolLatency.observe({ tool: result.toolName }, ownMs / 1000);
  deps.audit.write(toolAuditEntry({ ...call, result, decision, durationMs: ownMs }));
}

/**
 * `decision` is the one a beforeToolCall hook reported for this very call (it travels with the call
 * through the pipeline to its end event); without one the line says decision "run", decider "none".
 * `bytes` is the UTF-8 size of the text content plus the decoded size of image content;
 * `exitCode` comes from `details.exitCode` when the tool reports one (bash).
 */
function toolAuditEntry(input: {
  tenant: string;
  session: string;
  batch: string;
  result: ToolResultMessage;
  decision?: CallDecision | undefined;
  durationMs: number;
}): ToolAuditEntry {
  const { result, decision } = input;
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
    batch: input.batch,
    tool: result.toolName,
    toolCallId: result.toolCallId,
    decision: decision?.decision ?? "run",
    ...(decision?.rule ? { rule: decision.rule } : {}),
    decider: decision?.decider ?? "none",
    isError: result.isError,
    ...(exitCode === undefined ? {} : { exitCode }),
    bytes,
    durationMs: input.durationMs,
    ...(decision?.approvalMs === undefined ? {} : { approvalMs: decision.approvalMs }),
  };
}
