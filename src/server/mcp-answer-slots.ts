/**
 * Keeps an MCP tools/call's maxConcurrentToolCalls slot until its answer is delivered, as for the
 * REST batches: answers a client never reads stay bounded by the quota. The SDK's streamable HTTP
 * transport writes a request's answer on the response of the POST that carried it (an SSE stream,
 * or JSON), found by the request's JSON-RPC id (last POST wins for a repeated id, as in the SDK's
 * own map); this module keeps the same map, so that at the end of a call the response to wait for
 * is the one its answer goes to. A call over the quota gets a tool result with `isError: true`.
 */
import type { ServerResponse } from "node:http";
import type { RequestId } from "@modelcontextprotocol/sdk/types.js";
import type { McpCallRequest } from "../mcp/index.js";
import type { ToolCall, ToolResultMessage } from "../tools/index.js";
import type { QuotaExceededError } from "./errors.js";
import { endIfStalled, onResponseOver } from "./response-over.js";

/** The tools/call requests of a POST body (one JSON-RPC message or a batch of them). */
function toolsCallIds(body: unknown): RequestId[] {
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  const ids: RequestId[] = [];
  for (const m of messages) {
    const { method, id } = (m ?? {}) as { method?: unknown; id?: unknown };
    if (method === "tools/call" && (typeof id === "string" || typeof id === "number")) ids.push(id);
  }
  return ids;
}

/** A POST's response and the tools/call answers it is still to carry. */
interface Answering {
  res: ServerResponse;
  pending: Set<RequestId>;
}

/** Which HTTP response carries each pending tools/call answer of one MCP session. */
export class McpAnswerResponses {
  private readonly byId = new Map<RequestId, Answering>();

  /** @param stallMs httpRequestTimeoutMs: an answer the client takes none of for this long ends its connection. */
  constructor(private readonly stallMs: number) {}

  /** Records that the tools/call requests in `body` are answered on `res` (call before the transport reads it). */
  track(body: unknown, res: ServerResponse): void {
    const ids = toolsCallIds(body);
    if (ids.length === 0) return;
    const answering: Answering = { res, pending: new Set(ids) };
    for (const id of ids) {
      this.byId.get(id)?.pending.delete(id);
      this.byId.set(id, answering);
    }
    onResponseOver(res, () => {
      for (const id of ids) if (this.byId.get(id) === answering) this.byId.delete(id);
    });
  }

  /**
   * BatchRunOptions.releaseSlots for the call of `request`: its slot goes back when the response
   * its answer is written to is over (delivered, closed, or stalled for stallMs), at once when
   * there is none (the client left) or the request was cancelled (the SDK then sends no answer).
   */
  releaseSlots(request: McpCallRequest): (release: () => void) => void {
    return (release) => {
      // A cancelled request's stream may stay open with nothing to deliver: its slot goes now.
      // The SDK aborts the signal only until the answer is sent, never after.
      if (request.signal.aborted) return release();
      request.signal.addEventListener("abort", release, { once: true });
      const answering = this.byId.get(request.id);
      if (!answering) return release();
      answering.pending.delete(request.id);
      // The stall clock starts with the response's last answer: a silent call still running in
      // the same JSON-RPC batch must not be cut.
      if (answering.pending.size === 0) endIfStalled(answering.res, this.stallMs);
      onResponseOver(answering.res, release);
    };
  }
}

/**
 * The results of `calls` refused by a tenant quota: one `isError` result each, whose text is the
 * REST 429 body's code and message and whose details (`_meta["io.warden/details"]`) are
 * `{code, retryAfterSeconds}`: MCP clients hand a tool's error text to the model, which can retry.
 */
export function quotaRefusedResults(calls: ToolCall[], err: QuotaExceededError): ToolResultMessage[] {
  return calls.map((call) => ({
    role: "toolResult",
    toolCallId: call.id,
    toolName: call.name,
    content: [{ type: "text", text: `${err.code}: ${err.message}` }],
    details: { code: err.code, retryAfterSeconds: err.retryAfterSeconds },
    isError: true,
    timestamp: Date.now(),
  }));
}
