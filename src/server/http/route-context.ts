/**
 * What the route groups share with the app that registers them: the app type, the plugin type of
 * a route group, the server context, the authenticated principal of a request, and the request's
 * audit line. Routes import this, never
 * app.ts (fastify's plugin habit: a plugin gets what it needs and does not know who registers it).
 */
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyPluginAsync,
  FastifyRequest,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from "fastify";
import type { SessionContext } from "../sessions/index.js";
import { type Principal, UnauthorizedError } from "../tenancy/index.js";

declare module "fastify" {
  interface FastifyRequest {
    /** Set by the auth hook on every /v1 route. */
    principal: Principal | null;
  }
}

/** The fastify instance type with the TypeBox provider. */
export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/**
 * A route group: a fastify plugin (registered with `app.register(plugin, options)`, in its own
 * encapsulated context) that gets the server context, and whatever else it needs, in its options.
 */
export type RoutePlugin<Options extends { ctx: ServerContext } = { ctx: ServerContext }> = FastifyPluginAsync<
  Options,
  RawServerDefault,
  TypeBoxTypeProvider
>;

/**
 * What routes share: the sessions' context (the registry, quotas, backend, audit, metrics,
 * approvals, config: sessions/context.ts) and `state`, whose `draining` is true once shutdown
 * began (new work gets 503).
 */
export interface ServerContext extends SessionContext {
  state: { draining: boolean };
}

/** The authenticated principal of a /v1 request. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new UnauthorizedError();
  return request.principal;
}

/**
 * Requests whose route writes their audit line itself (the hijacked SSE stream, which knows its
 * bytes): the app's onResponse hook writes none for them, so each request has one line.
 */
export const auditedByRoute = new WeakSet<FastifyRequest>();

/**
 * The warden session a request reached when its URL does not name it (/mcp names it by its
 * `mcp-session-id`): set by the route, written in the request's audit line.
 */
export const auditSessionOf = new WeakMap<FastifyRequest, string>();

/** Writes the audit line of one request (also used by the hijacked SSE route). */
export function auditRequest(
  ctx: ServerContext,
  request: FastifyRequest,
  status: number,
  bytes: number,
  durationMs: number,
): void {
  const params = request.params as { id?: string } | undefined;
  const route = request.routeOptions.url ?? "unknown";
  const session = auditSessionOf.get(request) ?? (route.startsWith("/v1/sessions") ? params?.id : undefined);
  ctx.audit.write({
    kind: "request",
    ...(request.principal ? { tenant: request.principal.tenant.id, key: request.principal.keyId } : {}),
    ...(session ? { session } : {}),
    method: request.method,
    route,
    status,
    bytes,
    durationMs: Math.round(durationMs),
  });
}
