/**
 * Keeps an MCP tools/call's maxConcurrentToolCalls slot until its answer is delivered, as for the
 * REST batches: answers a client never reads stay bounded by the quota. The SDK's streamable HTTP
 * transport writes a request's answer on the response of the POST that carried it (an SSE stream,
 * or JSON), found by the request's JSON-RPC id: the last POST it accepted with that id. This module
 * keeps a list per id of the POSTs that carried it, and a POST's end removes only its own entries:
 * one the SDK refused (406, 400) ends at once, so the earlier POST is the current one again, as in
 * the SDK. A call over the quota gets a tool result with `isError: true`.
 */
import type { ServerResponse } from "node:http";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/sdk/types.js";
import type { McpCallRequest } from "../../mcp/index.js";
import type { ToolCall, ToolResultMessage } from "../../tools/index.js";
import type { QuotaExceededError } from "../tenancy/index.js";
import { endIfStalled, onResponseOver } from "./response-over.js";

const isId = (id: unknown): id is RequestId => typeof id === "string" || typeof id === "number";

/** The ids of the JSON-RPC requests of a POST body (one message or a batch of them), each once. */
function requestIds(body: unknown): RequestId[] {
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  const ids = new Set<RequestId>();
  for (const m of messages) {
    const { method, id } = (m ?? {}) as { method?: unknown; id?: unknown };
    if (typeof method === "string" && isId(id)) ids.add(id);
  }
  return [...ids];
}

/** The id of the request `message` answers (a result or an error the server sends). */
function answeredId(message: JSONRPCMessage): RequestId | undefined {
  const m = message as { id?: unknown; result?: unknown; error?: unknown; method?: unknown };
  const answer = m.method === undefined && (m.result !== undefined || m.error !== undefined);
  return answer && isId(m.id) ? m.id : undefined;
}

/** The id of the request `message` cancels (a client's notifications/cancelled). */
function cancelledId(message: JSONRPCMessage): RequestId | undefined {
  const m = message as { method?: unknown; params?: { requestId?: unknown } };
  if (m.method !== "notifications/cancelled") return undefined;
  return isId(m.params?.requestId) ? m.params.requestId : undefined;
}

/** A POST's response and the requests whose answers it is still to carry. */
interface Answering {
  res: ServerResponse;
  pending: Set<RequestId>;
}

/** Which HTTP response carries each pending request's answer, for one MCP session. */
export class McpAnswerResponses {
  /** Per request id, the POSTs that carried it and have not ended, oldest first: the last one is current. */
  private readonly byId = new Map<RequestId, Answering[]>();

  /** @param stallMs httpRequestTimeoutMs: an answer the client takes none of for this long ends its connection. */
  constructor(private readonly stallMs: number) {}

  /** Records that the requests in `body` may be answered on `res` (call before the transport reads it). */
  track(body: unknown, res: ServerResponse): void {
    const ids = requestIds(body);
    if (ids.length === 0) return;
    const answering: Answering = { res, pending: new Set(ids) };
    for (const id of ids) this.byId.set(id, [...(this.byId.get(id) ?? []), answering]);
    onResponseOver(res, () => {
      for (const id of ids) {
        const left = (this.byId.get(id) ?? []).filter((a) => a !== answering);
        if (left.length > 0) this.byId.set(id, left);
        else this.byId.delete(id);
      }
    });
  }

  /**
   * Counts the answers `transport` (connected already) sends, and the requests the client cancels
   * (the SDK then sends none): every path that answers a request ends in the transport's `send`,
   * whether the call ran, was refused by the quota, or never reached the runner (invalid params).
   */
  watch(transport: Pick<Transport, "send" | "onmessage">): void {
    const send = transport.send.bind(transport);
    transport.send = async (message, options) => {
      try {
        await send(message, options);
      } finally {
        const id = answeredId(message);
        if (id !== undefined) this.settled(id);
      }
    };
    const onmessage = transport.onmessage;
    transport.onmessage = (message, extra) => {
      onmessage?.(message, extra);
      // Only a cancel: a response the client sends answers one of the server's own requests
      // (an elicitation), whose ids are not the client's.
      const id = cancelledId(message);
      if (id !== undefined) this.settled(id);
    };
  }

  /**
   * No answer for `id` is to come any more: no response waits for it. The stall clock of a
   * response starts once it waits for none: a silent call still running in the same JSON-RPC
   * batch must not be cut, and an unread answer must not keep its bytes and slots forever.
   */
  private settled(id: RequestId): void {
    for (const a of this.byId.get(id) ?? [])
      if (a.pending.delete(id) && a.pending.size === 0) endIfStalled(a.res, this.stallMs);
  }

  /**
   * True while the response that is to carry `id`'s messages (the last POST that carried it, as
   * the SDK picks it) holds writes its socket has not taken (`writableNeedDrain`): what is written
   * to it then waits in the server's memory. False when no response carries it.
   */
  congested(id: RequestId): boolean {
    return this.byId.get(id)?.at(-1)?.res.writableNeedDrain === true;
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
      const answering = this.byId.get(request.id)?.at(-1);
      if (!answering) return release();
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
