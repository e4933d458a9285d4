/**
 * POST/GET/DELETE /mcp: MCP over streamable HTTP (the SDK's StreamableHTTPServerTransport), with the
 * tenant's bearer key. An `initialize` request without an `mcp-session-id` creates a warden session
 * with the tenant's defaults (copy mode, empty workspace, default image, its policy and quotas: over
 * maxSessions is a 429 + Retry-After); later requests name the MCP session, which only its own
 * tenant can reach (another tenant's id is a 404 like an unknown one). Tool calls go through the
 * sessions' runToolCalls (sessions/tool-calls.ts), so maxConcurrentToolCalls, idle time and the audit log apply as for
 * /v1/.../tool-calls: a call keeps its slot until its answer is delivered (mcp-answer-slots.ts), and
 * one over the quota is an `isError` result naming it. An `ask` waits for an answer on
 * /v1/approvals. DELETE /mcp ends both; the warden session closing for any reason (REST DELETE,
 * idle time, lifetime) closes the MCP session at once: its transport and streams end, and a later
 * request naming it is a 404, as the MCP streamable HTTP transport specifies for an ended session.
 * Every request's audit line names the warden session it reached (route-context.ts). A client's
 * standalone GET event stream is ended when shutdown starts (it would otherwise hold shutdown for
 * its grace).
 */
import { randomUUID } from "node:crypto";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { InvalidArgumentError, NotFoundError } from "../../../errors.js";
import { createMcpServer, serveSessionTools } from "../../../mcp/index.js";
import {
  closeSession,
  createSession,
  type LiveSession,
  reserveSession,
  resolveSessionRequest,
  runToolCalls,
} from "../../sessions/index.js";
import { QuotaExceededError } from "../../tenancy/index.js";
import { McpAnswerResponses, quotaRefusedResults } from "../mcp-answer-slots.js";
import { auditSessionOf, principalOf, type RoutePlugin } from "../route-context.js";

/** One MCP session over HTTP and the warden session behind it. */
interface McpHttpSession {
  transport: StreamableHTTPServerTransport;
  answers: McpAnswerResponses;
  tenantId: string;
  wardenSessionId: string;
  abort: AbortController;
}

/** The /mcp route and its MCP sessions (a plugin: its hooks end them on close). */
export const mcpRoutes: RoutePlugin = async (app, { ctx }) => {
  const sessions = new Map<string, McpHttpSession>();

  const end = async (mcpSessionId: string): Promise<void> => {
    const entry = sessions.get(mcpSessionId);
    if (!entry) return;
    sessions.delete(mcpSessionId);
    entry.abort.abort();
    await closeSession(ctx, entry.wardenSessionId, "deleted").catch(() => undefined);
  };

  // The warden session went first (REST DELETE, idle, lifetime): its MCP session ends with it, so
  // no transport, stream or handler outlives it (the transport's onclose then finds no entry).
  // One listener for all MCP sessions, subscribed with the first (the app is also built without
  // sessions, for its OpenAPI document) and unsubscribed when the app closes.
  let unsubscribe: (() => void) | undefined;
  const endWithWardenSession = (live: LiveSession): void => {
    for (const [mcpSessionId, entry] of sessions) {
      if (entry.wardenSessionId !== live.record.id) continue;
      sessions.delete(mcpSessionId);
      entry.abort.abort();
      void entry.transport.close().catch(() => undefined);
    }
  };

  // Fastify closes the listener, which waits for every connection, before its onClose hooks run: a
  // client's standalone GET stream never ends by itself and would hold shutdown for the whole
  // grace. Ended when draining starts (the client's reconnect is refused); POST streams, with
  // answers still to come, are left to end with them.
  app.addHook("preClose", async () => {
    for (const entry of sessions.values()) entry.transport.closeStandaloneSSEStream();
  });

  app.addHook("onClose", async () => {
    unsubscribe?.();
    for (const entry of sessions.values()) entry.abort.abort();
    await Promise.all([...sessions.values()].map((e) => e.transport.close().catch(() => undefined)));
    sessions.clear();
  });

  /** Creates the warden session and the MCP transport for an initialize request. */
  const open = async (
    tenant: ReturnType<typeof principalOf>["tenant"],
  ): Promise<{ transport: StreamableHTTPServerTransport; wardenSessionId: string }> => {
    unsubscribe ??= ctx.registry.onRemoved(endWithWardenSession);
    const release = reserveSession(ctx, tenant);
    const live = await createSession(ctx, tenant, await resolveSessionRequest(tenant, {}), release);
    const abort = new AbortController();
    const server = createMcpServer();
    const answers = new McpAnswerResponses(ctx.config.httpRequestTimeoutMs);
    serveSessionTools(
      server,
      {
        providerTools: () => live.session.providerTools(),
        progressCongested: (request) => answers.congested(request.id),
        runToolCalls: async (calls, options, request) => {
          const releaseSlots = answers.releaseSlots(request);
          try {
            // Looked up for each call: once the warden session is closing, its calls are a 404.
            const current = ctx.registry.get(tenant.id, live.record.id);
            return await runToolCalls(ctx, { ...options, tenant, live: current, calls, releaseSlots });
          } catch (err) {
            if (err instanceof QuotaExceededError) return quotaRefusedResults(calls, err);
            throw err;
          }
        },
      },
      abort.signal,
    );
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        const wardenSessionId = live.record.id;
        sessions.set(id, { transport, answers, tenantId: tenant.id, wardenSessionId, abort });
      },
      onsessionclosed: (id) => end(id),
    });
    transport.onclose = () => {
      if (transport.sessionId) void end(transport.sessionId);
      else void closeSession(ctx, live.record.id, "deleted").catch(() => undefined);
    };
    await server.connect(transport);
    answers.watch(transport);
    return { transport, wardenSessionId: live.record.id };
  };

  app.route({
    method: ["POST", "GET", "DELETE"],
    url: "/mcp",
    handler: async (request, reply) => {
      const { tenant } = principalOf(request);
      const header = request.headers["mcp-session-id"];
      const mcpSessionId = Array.isArray(header) ? header[0] : header;
      let transport: StreamableHTTPServerTransport;
      if (mcpSessionId) {
        const entry = sessions.get(mcpSessionId);
        if (!entry || entry.tenantId !== tenant.id) {
          throw new NotFoundError(
            `No MCP session '${mcpSessionId}': initialize a new one (POST /mcp without mcp-session-id).`,
          );
        }
        transport = entry.transport;
        auditSessionOf.set(request, entry.wardenSessionId);
        // Before the transport dispatches the calls: where each answer will be written.
        entry.answers.track(request.body, reply.raw);
      } else if (request.method === "POST" && isInitializeRequest(request.body)) {
        const opened = await open(tenant);
        transport = opened.transport;
        auditSessionOf.set(request, opened.wardenSessionId);
      } else {
        throw new InvalidArgumentError(
          "An MCP request without an mcp-session-id header must be a POST of an initialize request.",
        );
      }
      reply.hijack();
      await transport.handleRequest(request.raw, reply.raw, request.body);
      // An initialize the transport refused (406 without `Accept: text/event-stream`, 415 for
      // another content type) started no MCP session: nobody can reach the warden session made for
      // it, so it goes now (its onclose closes the warden session) instead of holding a
      // container and a maxSessions slot until its idle time runs out.
      if (!mcpSessionId && transport.sessionId === undefined) await transport.close();
    },
  });
};
