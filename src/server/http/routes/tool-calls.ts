/**
 * POST /v1/sessions/:id/tool-calls: runs one batch and answers `{results}` in call order; with
 * `Accept: text/event-stream` it streams `tool_execution_start` / `_update` / `_end` events (SSE,
 * with backpressure, see sse-writer.ts) and then one `results` event. A client that disconnects
 * before the answer is complete aborts its calls (the pipeline kills their processes). A batch whose
 * tool-call ids repeat, or whose arguments nest deeper than MAX_ARGUMENT_DEPTH, is refused with HTTP
 * 400 naming them before anything runs or streams. A large answer's JSON is written in a worker
 * (result-json.ts). A batch's maxConcurrentToolCalls slots are held until its answer is delivered
 * (or its connection closed, or stalled for httpRequestTimeoutMs once the answer is being written).
 */
import type { FastifyRequest } from "fastify";
import { DuplicateToolCallIdError, duplicateToolCallIds } from "../../../pipeline/index.js";
import { runToolCalls } from "../../sessions/index.js";
import { abortOnDisconnect } from "../abort-on-disconnect.js";
import { checkArgumentDepth } from "../call-arguments.js";
import { toErrorResponse } from "../errors.js";
import { endIfStalled, onResponseOver } from "../response-over.js";
import { largeAnswerJson, sendJsonBytes } from "../result-json.js";
import { auditedByRoute, auditRequest, principalOf, type RoutePlugin } from "../route-context.js";
import {
  ErrorSchema,
  SessionParamsSchema,
  ToolCallsBodySchema,
  ToolCallsResponseSchema,
} from "../schemas.js";
import { SseWriter } from "../sse-writer.js";

function wantsStream(request: FastifyRequest): boolean {
  return (request.headers.accept ?? "").includes("text/event-stream");
}

/** The tool-call route (a plugin). */
export const toolCallRoutes: RoutePlugin = async (app, { ctx }) => {
  app.post(
    "/v1/sessions/:id/tool-calls",
    {
      schema: {
        params: SessionParamsSchema,
        body: ToolCallsBodySchema,
        response: { 200: ToolCallsResponseSchema, 400: ErrorSchema, 404: ErrorSchema, 429: ErrorSchema },
      },
    },
    async (request, reply) => {
      const { tenant } = principalOf(request);
      const sessionId = request.params.id;
      const calls = request.body.toolCalls;
      // Results, events, approvals and audit lines name a call by its id: ids must not repeat.
      const repeated = duplicateToolCallIds(calls);
      if (repeated.length > 0) throw new DuplicateToolCallIdError(repeated);
      checkArgumentDepth(calls);
      // Ownership first: another tenant's session is a plain 404 before anything streams.
      const live = ctx.registry.get(tenant.id, sessionId);
      const controller = abortOnDisconnect(reply);
      // The calls' slots are kept until the answer is delivered: answers a client never reads are
      // bounded by maxConcurrentToolCalls, and one it stops taking ends after httpRequestTimeoutMs.
      const releaseSlots = (release: () => void) => onResponseOver(reply.raw, release);
      const batch = { tenant, live, calls, signal: controller.signal, releaseSlots };
      const stallMs = ctx.config.httpRequestTimeoutMs;
      if (!wantsStream(request)) {
        const results = await runToolCalls(ctx, batch);
        // A large answer (a 12,000-line edit's diff and patch) is serialised in a worker.
        const json = await largeAnswerJson(results);
        endIfStalled(reply.raw, stallMs);
        if (json) return sendJsonBytes(reply, json);
        return { results };
      }

      // The concurrency quota up front, so a refused stream is a real 429 and not an SSE error.
      const release = ctx.quotas.reserveCalls(tenant, calls.length);
      release();
      reply.hijack();
      auditedByRoute.add(request);
      const started = Date.now();
      const raw = reply.raw;
      raw.writeHead(200, {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache, no-transform",
        connection: "keep-alive",
        "x-accel-buffering": "no",
      });
      const sse = new SseWriter(raw);
      // An ask holds its call until the tenant answers: announce it on the stream, so a client
      // need not poll GET /v1/approvals.
      const unwatch = ctx.approvals.watch(tenant.id, sessionId, (view) =>
        sse.send("approval_requested", view),
      );
      let status = 200;
      try {
        const results = await runToolCalls(ctx, {
          ...batch,
          onEvent: (event) => {
            if (event.type === "tool_execution_update") sse.send(event.type, event, event.toolCallId);
            else if (event.type === "tool_execution_start") sse.send(event.type, event);
            else {
              // The policy decision is for the audit line; the stream keeps Pi's end event shape.
              const { decision: _decision, ...end } = event;
              sse.dropPending(event.toolCallId);
              sse.send(event.type, end);
            }
          },
        });
        sse.send("results", { results });
      } catch (err) {
        const { status: s, body } = toErrorResponse(err);
        status = s;
        sse.send("error", body);
      } finally {
        unwatch();
      }
      // The last events, results or error, are on their way: a client that takes none of them ends
      // the stream. A response queued behind a pipelined one never drains nor closes: its socket's
      // close ends the wait.
      endIfStalled(raw, stallMs);
      await Promise.race([sse.settle(), new Promise<void>((resolve) => onResponseOver(raw, resolve))]);
      raw.end();
      // The stream's own bytes: the socket's count is gone once the response ends, and on a kept-alive
      // connection it counts earlier responses too.
      auditRequest(ctx, request, status, sse.stats.bytes, Date.now() - started);
    },
  );
};
