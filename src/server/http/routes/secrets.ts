/**
 * The tenant's secret store (src/server/secrets): PUT /v1/secrets/:name (create, or rotate: a new
 * value and bindings, version + 1), DELETE /v1/secrets/:name (revoke), GET /v1/secrets and
 * GET /v1/secrets/:name (names, bindings, versions, times). No route returns a value, and no error
 * repeats one. Only the caller's secrets exist for it: another tenant's name is a 404 like an
 * unknown one. Without `secrets` in the server config every route is a 400 naming secrets.keyFile.
 */
import { Type } from "typebox";
import { NotFoundError } from "../../../errors.js";
import { type SecretStore, SecretsNotConfiguredError } from "../../secrets/index.js";
import { principalOf, type RoutePlugin } from "../route-context.js";
import { ErrorSchema, PutSecretBodySchema, SecretParamsSchema, SecretSchema } from "../schemas.js";

/** The secret routes (a plugin). */
export const secretRoutes: RoutePlugin = async (app, { ctx }) => {
  const storeOf = (): SecretStore => {
    if (!ctx.secrets) throw new SecretsNotConfiguredError();
    return ctx.secrets;
  };
  const missing = (tenant: string, name: string) =>
    new NotFoundError(
      `Tenant '${tenant}' has no secret ${JSON.stringify(name)}; GET /v1/secrets lists its secrets.`,
    );

  app.get(
    "/v1/secrets",
    { schema: { response: { 200: Type.Object({ secrets: Type.Array(SecretSchema) }), 400: ErrorSchema } } },
    async (request) => {
      const { tenant } = principalOf(request);
      return { secrets: storeOf().list(tenant.id) };
    },
  );

  app.get(
    "/v1/secrets/:name",
    {
      schema: {
        params: SecretParamsSchema,
        response: { 200: SecretSchema, 400: ErrorSchema, 404: ErrorSchema },
      },
    },
    async (request) => {
      const { tenant } = principalOf(request);
      const secret = storeOf().info(tenant.id, request.params.name);
      if (!secret) throw missing(tenant.id, request.params.name);
      return secret;
    },
  );

  app.put(
    "/v1/secrets/:name",
    {
      schema: {
        params: SecretParamsSchema,
        body: PutSecretBodySchema,
        response: { 200: SecretSchema, 201: SecretSchema, 400: ErrorSchema, 429: ErrorSchema },
      },
    },
    async (request, reply) => {
      const { tenant } = principalOf(request);
      const { value, bindings } = request.body;
      const { secret, created } = await storeOf().put(tenant.id, request.params.name, value, bindings);
      reply.code(created ? 201 : 200);
      return secret;
    },
  );

  app.delete(
    "/v1/secrets/:name",
    {
      schema: {
        params: SecretParamsSchema,
        response: { 204: Type.Null(), 400: ErrorSchema, 404: ErrorSchema },
      },
    },
    async (request, reply) => {
      const { tenant } = principalOf(request);
      if (!(await storeOf().delete(tenant.id, request.params.name)))
        throw missing(tenant.id, request.params.name);
      reply.code(204);
      return null;
    },
  );
};
