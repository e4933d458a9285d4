/**
 * POST /v1/sessions (JSON options, or a workspace tar body with options in the query string),
 * GET /v1/sessions, GET /v1/sessions/:id, DELETE /v1/sessions/:id. Only the caller's sessions exist
 * for it: another tenant's id is a 404 exactly like an unknown one.
 */
import { mkdir, rm } from "node:fs/promises";
import type { ServerResponse } from "node:http";
import type { Readable } from "node:stream";
import { Type } from "typebox";
import { Compile } from "typebox/compile";
import { InvalidArgumentError } from "../../../errors.js";
import { dottedPath, schemaErrorLines } from "../../../util/index.js";
import {
  type CreateSessionInput,
  closeSession,
  createSession,
  type LiveSession,
  reserveSession,
  resolveSessionRequest,
  unpackWorkspaceTar,
  uploadsDirOf,
} from "../../sessions/index.js";
import { mediaTypeOf } from "../buffered-bytes.js";
import { principalOf, type RoutePlugin } from "../route-context.js";
import {
  CreateSessionBodySchema,
  CreateSessionQuerySchema,
  ErrorSchema,
  SessionParamsSchema,
  SessionSchema,
} from "../schemas.js";

/** The API view of a live session. */
function sessionView(live: LiveSession) {
  const r = live.record;
  return {
    id: r.id,
    tenant: r.tenant,
    containerId: r.containerId,
    image: r.image,
    workspaceMode: r.workspaceMode,
    limits: r.limits,
    enabledTools: [...live.session.enabledTools],
    createdAt: r.createdAt,
    expiresAt: r.expiresAt,
    lastActiveAt: new Date(live.lastActiveMs).toISOString(),
    runningBatches: live.running.size,
  };
}

function fromQuery(q: Record<string, string | number | undefined>): CreateSessionInput {
  const limits: CreateSessionInput["limits"] = {};
  if (q.cpus !== undefined) limits.cpus = Number(q.cpus);
  if (q.memoryBytes !== undefined) limits.memoryBytes = Number(q.memoryBytes);
  if (q.workspaceBytes !== undefined) limits.workspaceBytes = Number(q.workspaceBytes);
  return {
    ...(typeof q.image === "string" ? { image: q.image } : {}),
    ...(typeof q.workspaceMode === "string" ? { workspaceMode: q.workspaceMode as "copy" } : {}),
    limits,
    ...(typeof q.tools === "string" ? { tools: { tools: q.tools.split(",").filter(Boolean) } } : {}),
  };
}

const bodyValidator = Compile(CreateSessionBodySchema);

function checkBody(body: unknown): CreateSessionInput {
  if (bodyValidator.Check(body)) return body as CreateSessionInput;
  const fieldOf = (path: string) => dottedPath(path) || "body";
  const [first] = schemaErrorLines(bodyValidator.Errors(body), fieldOf);
  throw new InvalidArgumentError(
    `${first ?? "body is invalid"}; the fields are image, workspaceMode, workspacePath, limits, tools, env, network and secrets (docs/server-api.md, API).`,
  );
}

/**
 * Whether the client closed its connection before `res` was answered: ServerResponse emits
 * "close" when the connection ends, and before the answer is written that can only be the client
 * going away (a create it aborted). The returned function reads the flag.
 */
function watchClientGone(res: ServerResponse): () => boolean {
  let gone = false;
  res.once("close", () => {
    if (!res.writableFinished) gone = true;
  });
  return () => gone;
}

/** The session routes (a plugin). */
export const sessionRoutes: RoutePlugin = async (app, { ctx }) => {
  app.post(
    "/v1/sessions",
    {
      config: { bufferedBody: "json-or-tar" },
      schema: {
        querystring: CreateSessionQuerySchema,
        response: { 201: SessionSchema, 400: ErrorSchema, 429: ErrorSchema, 503: ErrorSchema },
      },
    },
    async (request, reply) => {
      const { tenant } = principalOf(request);
      const isTar = mediaTypeOf(request) === "application/x-tar";
      // The slot is taken before an upload is unpacked, so a tenant at maxSessions writes nothing
      // and at most maxSessions uploads of a tenant are on disk at once.
      const release = reserveSession(ctx, tenant);
      const clientGone = watchClientGone(reply.raw);
      let uploaded: string | undefined;
      try {
        let input: CreateSessionInput;
        if (isTar) {
          input = fromQuery(request.query);
          const parent = uploadsDirOf(ctx.config.stateDir);
          await mkdir(parent, { recursive: true, mode: 0o700 });
          const { tarBodyLimitBytes, tarMaxEntries } = ctx.config;
          uploaded = await unpackWorkspaceTar(
            request.body as Readable,
            tarBodyLimitBytes,
            parent,
            tarMaxEntries,
          );
        } else {
          input = checkBody(request.body ?? {});
        }
        const resolved = await resolveSessionRequest(tenant, input, uploaded);
        const live = await createSession(ctx, tenant, resolved, release);
        if (clientGone()) {
          // Nobody will learn its id: it would only hold a maxSessions slot until its idle TTL.
          await closeSession(ctx, live.record.id, "client went away before the create answered");
          reply.hijack(); // nothing to answer: the connection is gone
          reply.raw.destroy();
          return;
        }
        reply.code(201);
        return sessionView(live);
      } catch (err) {
        if (uploaded) await rm(uploaded, { recursive: true, force: true });
        throw err;
      } finally {
        release();
      }
    },
  );

  app.get(
    "/v1/sessions",
    { schema: { response: { 200: Type.Object({ sessions: Type.Array(SessionSchema) }) } } },
    async (request) => {
      const { tenant } = principalOf(request);
      return { sessions: ctx.registry.list(tenant.id).map(sessionView) };
    },
  );

  app.get(
    "/v1/sessions/:id",
    { schema: { params: SessionParamsSchema, response: { 200: SessionSchema, 404: ErrorSchema } } },
    async (request) => {
      const { tenant } = principalOf(request);
      return sessionView(ctx.registry.get(tenant.id, request.params.id));
    },
  );

  app.delete(
    "/v1/sessions/:id",
    { schema: { params: SessionParamsSchema, response: { 204: Type.Null(), 404: ErrorSchema } } },
    async (request, reply) => {
      const { tenant } = principalOf(request);
      const live = ctx.registry.get(tenant.id, request.params.id);
      await closeSession(ctx, live.record.id, "deleted");
      reply.code(204);
      return null;
    },
  );
};
