/**
 * Runs one tool-call batch in a live session: within the tenant's maxConcurrentToolCalls,
 * abortable (client gone, close, shutdown), journalled while it runs (inflight-calls.ts), each
 * finished call counted and audited (tool-audit.ts) under the batch's own id.
 */
import { randomUUID } from "node:crypto";
import type { ToolExecutionEvent } from "../../pipeline/index.js";
import type { ToolCall, ToolResultMessage } from "../../tools/index.js";
import { onAbort } from "../../util/index.js";
import type { TenantConfig } from "../config/index.js";
import type { SessionContext } from "./context.js";
import type { LiveSession } from "./registry.js";
import { recordFinishedCall } from "./tool-audit.js";

/** The event that ends one call (its result and the decision reported for it). */
type ToolEndEvent = Extract<ToolExecutionEvent, { type: "tool_execution_end" }>;

/** How a batch runs: its abort signal, its events, and when its slots are given back. */
interface BatchRunOptions {
  /** Aborts the batch (client gone, shutdown); its results then carry the aborted calls. */
  signal?: AbortSignal;
  /** Every start, update and end event of the batch's calls. */
  onEvent?: (event: ToolExecutionEvent) => void;
  /**
   * Called with the release of the batch's maxConcurrentToolCalls slots when it ends, to give
   * them back later (a route: once its answer is delivered, so that answers no one reads stay
   * bounded by the quota); absent: released when the batch ends.
   */
  releaseSlots?: (release: () => void) => void;
}

/** One batch: the tenant's live session (from the registry) and its calls, with how it runs. */
export interface ToolCallBatch extends BatchRunOptions {
  tenant: TenantConfig;
  live: LiveSession;
  calls: ToolCall[];
}

/** What runToolCalls works with. */
export type ToolCallContext = Pick<SessionContext, "quotas" | "inflight" | "metrics" | "audit" | "now"> &
  Partial<Pick<SessionContext, "calls">>;

/**
 * Runs `batch.calls` in `batch.live` and resolves their results in call order. QuotaExceededError
 * (429) when the tenant's running calls plus this batch exceed maxConcurrentToolCalls.
 */
export async function runToolCalls(ctx: ToolCallContext, batch: ToolCallBatch): Promise<ToolResultMessage[]> {
  const { tenant, live, calls } = batch;
  const release = ctx.quotas.reserveCalls(tenant, calls.length);
  const controller = new AbortController();
  const unlink = onAbort(batch.signal, () => controller.abort());
  live.running.add(controller);
  live.lastActiveMs = ctx.now();
  const started = new Map<string, number>();
  // Each call's span in the session's running calls, ended with the call (audit links, running-calls.ts).
  const spans = new Map<string, (endMs: number) => void>();
  // The batch's own id keys its calls in the audit log (their ids are the client's, unique only within it).
  const batchId = randomUUID();
  let journalled: (() => Promise<void>) | undefined;
  try {
    const journal = {
      tenant: tenant.id,
      session: live.record.id,
      batch: batchId,
      calls: calls.map(({ id, name }) => ({ id, name })),
    };
    journalled = await ctx.inflight?.begin(journal);
    return await live.session.runToolCalls(calls, {
      signal: controller.signal,
      onEvent: (event) => {
        if (event.type === "tool_execution_start") {
          started.set(event.toolCallId, ctx.now());
          const span = ctx.calls?.start(
            live.record.id,
            { toolCallId: event.toolCallId, batch: batchId },
            Date.now(),
          );
          if (span) spans.set(event.toolCallId, span);
        }
        if (event.type === "tool_execution_end") {
          spans.get(event.toolCallId)?.(Date.now());
          finishCall(ctx, live, batchId, event, started);
        }
        batch.onEvent?.(event);
      },
    });
  } finally {
    for (const end of spans.values()) end(Date.now());
    unlink();
    live.running.delete(controller);
    live.lastActiveMs = ctx.now();
    if (batch.releaseSlots) batch.releaseSlots(release);
    else release();
    await journalled?.();
  }
}

/** Metrics and the audit line of one finished call (tool-audit.ts recordFinishedCall). */
function finishCall(
  ctx: ToolCallContext,
  live: LiveSession,
  batch: string,
  event: ToolEndEvent,
  started: Map<string, number>,
): void {
  const durationMs = ctx.now() - (started.get(event.result.toolCallId) ?? ctx.now());
  recordFinishedCall(ctx, { tenant: live.record.tenant, session: live.record.id, batch }, event, durationMs);
}
