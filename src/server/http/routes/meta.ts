/** GET /healthz, GET /metrics (Prometheus text), GET /v1/tools?session=… (provider tool schemas). */
import { Type } from "typebox";
import { poolState } from "../../sessions/index.js";
import { principalOf, type RoutePlugin } from "../route-context.js";
import { ErrorSchema, ToolsQuerySchema } from "../schemas.js";

const HealthSchema = Type.Object({ status: Type.String(), sessions: Type.Integer() });

/** The meta routes (a plugin). */
export const metaRoutes: RoutePlugin = async (app, { ctx }) => {
  app.get(
    "/healthz",
    { schema: { response: { 200: HealthSchema, 503: HealthSchema } } },
    async (_request, reply) => {
      if (ctx.state.draining) reply.code(503);
      return { status: ctx.state.draining ? "draining" : "ok", sessions: ctx.registry.all().length };
    },
  );

  app.get("/metrics", async (_request, reply) => {
    const pool = poolState(ctx.sessions.backend);
    ctx.metrics.poolIdle.set(pool.idle);
    ctx.metrics.poolBackoffKeys.set(pool.backoffKeys);
    reply.type(ctx.metrics.registry.contentType);
    return ctx.metrics.registry.metrics();
  });

  app.get(
    "/v1/tools",
    {
      schema: {
        querystring: ToolsQuerySchema,
        response: {
          200: Type.Object({
            tools: Type.Array(
              Type.Object({
                type: Type.Literal("function"),
                function: Type.Object({
                  name: Type.String(),
                  description: Type.String(),
                  parameters: Type.Record(Type.String(), Type.Unknown()),
                }),
              }),
            ),
          }),
          404: ErrorSchema,
        },
      },
    },
    async (request) => {
      const { tenant } = principalOf(request);
      const live = ctx.registry.get(tenant.id, request.query.session);
      return { tools: live.session.providerTools() };
    },
  );
};
