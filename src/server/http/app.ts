/**
 * Builds the fastify application: bearer auth on /v1, TypeBox schemas, JSON errors `{code, message}`
 * with the statuses of src/errors.ts (Retry-After on 429 and on 503 NO_ROOM), body limits, a bound
 * on the bytes held in memory at once (buffered-bytes.ts), on the time to send a request and on
 * the connections open (connections.ts), one audit line per request, WebSocket upgrades
 * (@fastify/websocket, for a process's attach route), and the route groups. No listening here (see server.ts); tests drive it with `inject`.
 */
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import websocket from "@fastify/websocket";
import Fastify, { type FastifyRequest } from "fastify";
import { KeyRing } from "../tenancy/index.js";
import { BufferedBytes, hasBody, holdRequestBody, noRouteMessage } from "./buffered-bytes.js";
import { clientErrorHandler } from "./client-errors.js";
import { trackConnections } from "./connections.js";
import { toErrorResponse } from "./errors.js";
import { type InlineJsonParser, parseJsonBody } from "./json-body.js";
import { registerOpenApi } from "./openapi.js";
import { type App, auditedByRoute, auditRequest, type ServerContext } from "./route-context.js";
import { approvalRoutes } from "./routes/approvals.js";
import { fileRoutes } from "./routes/files.js";
import { mcpRoutes } from "./routes/mcp.js";
import { metaRoutes } from "./routes/meta.js";
import { processRoutes } from "./routes/processes.js";
import { secretRoutes } from "./routes/secrets.js";
import { sessionRoutes } from "./routes/sessions.js";
import { toolCallRoutes } from "./routes/tool-calls.js";
import { workspaceRoutes } from "./routes/workspace.js";

/** Builds the app with every route registered. */
export function buildApp(ctx: ServerContext, options: { logger?: boolean } = {}): App {
  const { httpRequestTimeoutMs } = ctx.config;
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: ctx.config.jsonBodyLimitBytes,
    forceCloseConnections: "idle",
    return503OnClosing: true,
    requestTimeout: httpRequestTimeoutMs,
    clientErrorHandler: clientErrorHandler(httpRequestTimeoutMs),
    // Node checks the request timeout every connectionsCheckingInterval (default 30 s), and its
    // headersTimeout (default 60 s) must not exceed it.
    http: {
      connectionsCheckingInterval: Math.min(30_000, Math.max(100, Math.floor(httpRequestTimeoutMs / 4))),
      headersTimeout: Math.min(60_000, httpRequestTimeoutMs),
    },
  }).withTypeProvider<TypeBoxTypeProvider>();
  trackConnections(app.server, ctx.config, ctx.metrics);
  const keys = new KeyRing(ctx.config.tenants);
  const buffered = new BufferedBytes(ctx.config.maxBufferedBytes, ctx.metrics);

  app.decorateRequest("principal", null);
  app.addContentTypeParser("application/x-tar", (_req, payload, done) => done(null, payload));
  // Clients often send `content-type: application/json` on DELETE and GET with no body: accept
  // an empty JSON body as "no body" instead of fastify's 400. Non-empty bodies use fastify's own
  // parser (secure-json-parse: __proto__ and constructor keys are refused); large ones in a worker
  // (json-body.ts), so one tenant's 1 MiB bodies do not hold the event loop.
  const json = app.getDefaultJsonParser("error", "error");
  const inline: InlineJsonParser = (request, text) => {
    let parsed: { err: Error | null; value: unknown } | undefined;
    json(request, text, (err, value) => {
      parsed = { err, value };
    });
    if (parsed?.err) throw parsed.err;
    return parsed?.value;
  };
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser(
    "application/json",
    { parseAs: "buffer" },
    async (request: FastifyRequest, body: Buffer) => parseJsonBody(request, body, inline),
  );

  app.addHook("onRequest", async (request, reply) => {
    // The matched route, when there is one: the router decodes the path (/%761/sessions is /v1/sessions).
    const path = request.routeOptions.url ?? request.url.split("?")[0] ?? "";
    if (!path.startsWith("/v1/") && path !== "/mcp") return;
    try {
      request.principal = keys.authenticate(request.headers.authorization);
    } catch (err) {
      // The 401 closes the connection, so a body sent without a valid key is never read.
      if (hasBody(request)) reply.header("connection", "close");
      throw err;
    }
  });

  app.addHook("preParsing", async (request, reply, payload) =>
    holdRequestBody(buffered, ctx.config, request, reply, payload),
  );

  app.addHook("onResponse", async (request, reply) => {
    const route = request.routeOptions.url ?? "unknown";
    const status = reply.statusCode;
    ctx.metrics.httpLatency.observe(
      { method: request.method, route, status: String(status) },
      reply.elapsedTime / 1000,
    );
    if (auditedByRoute.has(request)) return;
    auditRequest(ctx, request, status, Number(reply.getHeader("content-length") ?? 0), reply.elapsedTime);
  });

  app.setErrorHandler(async (err, _request, reply) => {
    const { status, body, retryAfterSeconds } = toErrorResponse(err);
    if (retryAfterSeconds !== undefined) reply.header("retry-after", String(retryAfterSeconds));
    return reply.code(status).type("application/json").send(body);
  });
  app.setNotFoundHandler(async (request, reply) =>
    reply.code(404).send({ code: "NOT_FOUND", message: noRouteMessage(request) }),
  );

  registerOpenApi(app);
  // WebSocket upgrades go through the routes and hooks above (auth included) before they are
  // accepted; a message from a client is at most 1 MiB. At shutdown the open sockets are closed
  // with 1001 (going away).
  app.register(websocket, {
    options: { maxPayload: 1024 * 1024 },
    preClose: async () => {
      for (const socket of app.websocketServer.clients) socket.close(1001, "server shutting down");
      app.websocketServer.close();
    },
  });
  // Routes go in once the OpenAPI plugin has loaded, so that it sees every one of them. Each group
  // is a plugin of its own (routes/*.ts), in this order, inside one context that parses
  // `application/octet-stream` bodies (the files routes') as a stream for every group.
  app.register(async (routes: App) => {
    routes.addContentTypeParser("application/octet-stream", (_req, payload, done) => done(null, payload));
    routes.register(metaRoutes, { ctx });
    routes.register(sessionRoutes, { ctx });
    routes.register(toolCallRoutes, { ctx });
    routes.register(workspaceRoutes, { ctx });
    routes.register(approvalRoutes, { ctx });
    routes.register(secretRoutes, { ctx });
    routes.register(mcpRoutes, { ctx });
    routes.register(fileRoutes, { ctx, buffered });
    routes.register(processRoutes, { ctx });
  });
  return app;
}
