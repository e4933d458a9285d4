/**
 * /v1/sessions/:id/processes: a session's background processes (src/process) for agents and tools
 * that do not speak in tool calls: start, list, one process, its output from any offset (base64),
 * input, a signal, a terminal size, and a bounded wait. Like the files routes these are the
 * tenant's own API: the tool-call policy judges the `process` tool's calls, not these routes.
 * …/attach is a WebSocket on one process (its protocol: ../process-attach.ts).
 */

import type { FastifyRequest } from "fastify";
import { InvalidArgumentError, WardenError } from "../../../errors.js";
import type { Processes, ProcessInfo, ProcessSignal } from "../../../process/index.js";
import { validateSessionEnv } from "../../../session/index.js";
import { abortOnDisconnect } from "../abort-on-disconnect.js";
import { type AttachTarget, attachSocket } from "../process-attach.js";
import {
  auditedByRoute,
  auditRequest,
  principalOf,
  type RoutePlugin,
  type ServerContext,
} from "../route-context.js";
import {
  ErrorSchema,
  ProcessAttachQuerySchema,
  ProcessInputBodySchema,
  ProcessListSchema,
  ProcessOutputQuerySchema,
  ProcessOutputSchema,
  ProcessParamsSchema,
  ProcessResizeBodySchema,
  ProcessSchema,
  ProcessSignalBodySchema,
  ProcessWaitQuerySchema,
  SessionParamsSchema,
  StartProcessBodySchema,
} from "../schemas.js";

const ERRORS = { 400: ErrorSchema, 404: ErrorSchema, 409: ErrorSchema, 413: ErrorSchema };

/** Standard padded base64 (Buffer.from would skip what is not, writing other bytes than sent). */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Default wait of POST …/wait, in ms. */
const DEFAULT_WAIT_MS = 30_000;

/** A process as the API shows it: times as ISO-8601. */
function processJson(p: ProcessInfo) {
  const { startedAt, endedAt, ...rest } = p;
  return {
    ...rest,
    startedAt: startedAt.toISOString(),
    ...(endedAt ? { endedAt: endedAt.toISOString() } : {}),
  };
}

/** The background-process routes (see the file comment). */
export const processRoutes: RoutePlugin<{ ctx: ServerContext }> = async (app, { ctx }) => {
  /** The session's Processes (a request counts as the session's activity); 409 when its sandbox has no channel. */
  const processesOf = (tenant: string, id: string): Processes => {
    const live = ctx.registry.get(tenant, id);
    live.lastActiveMs = ctx.now();
    const { session } = live;
    if (!session.processes)
      throw new WardenError(
        "CONFLICT",
        `Session ${id} has no background processes: its sandbox uses the docker-exec path; create the session on the channel.`,
      );
    return session.processes;
  };

  app.post(
    "/v1/sessions/:id/processes",
    {
      schema: {
        params: SessionParamsSchema,
        body: StartProcessBodySchema,
        response: { 201: ProcessSchema, ...ERRORS },
      },
    },
    async (request, reply) => {
      const processes = processesOf(principalOf(request).tenant.id, request.params.id);
      const { command, cwd, env, pty } = request.body;
      // The names a session's env refuses are refused here too (session-env.ts).
      if (env) validateSessionEnv(env);
      const started = await processes.start({
        command: typeof command === "string" ? { shell: command } : { argv: command.argv },
        ...(cwd ? { cwd } : {}),
        ...(env ? { env } : {}),
        ...(pty ? { pty } : {}),
        signal: abortOnDisconnect(reply).signal,
      });
      return reply.code(201).send(processJson(started));
    },
  );

  app.get(
    "/v1/sessions/:id/processes",
    { schema: { params: SessionParamsSchema, response: { 200: ProcessListSchema, ...ERRORS } } },
    async (request, reply) => {
      const processes = processesOf(principalOf(request).tenant.id, request.params.id);
      const list = await processes.list({ signal: abortOnDisconnect(reply).signal });
      return { processes: list.map(processJson) };
    },
  );

  app.get(
    "/v1/sessions/:id/processes/:pid",
    { schema: { params: ProcessParamsSchema, response: { 200: ProcessSchema, ...ERRORS } } },
    async (request, reply) => {
      const processes = processesOf(principalOf(request).tenant.id, request.params.id);
      return processJson(
        await processes.info(request.params.pid, { signal: abortOnDisconnect(reply).signal }),
      );
    },
  );

  app.get(
    "/v1/sessions/:id/processes/:pid/output",
    {
      schema: {
        params: ProcessParamsSchema,
        querystring: ProcessOutputQuerySchema,
        response: { 200: ProcessOutputSchema, ...ERRORS },
      },
    },
    async (request, reply) => {
      const processes = processesOf(principalOf(request).tenant.id, request.params.id);
      const slice = await processes.read(request.params.pid, {
        ...(request.query.offset !== undefined ? { offset: request.query.offset } : {}),
        ...(request.query.maxBytes !== undefined ? { maxBytes: request.query.maxBytes } : {}),
        signal: abortOnDisconnect(reply).signal,
      });
      return {
        offset: slice.offset,
        nextOffset: slice.nextOffset,
        skipped: slice.skipped,
        data: slice.data.toString("base64"),
        process: processJson(slice.process),
      };
    },
  );

  app.post(
    "/v1/sessions/:id/processes/:pid/input",
    {
      schema: { params: ProcessParamsSchema, body: ProcessInputBodySchema, response: { 204: {}, ...ERRORS } },
    },
    async (request, reply) => {
      const processes = processesOf(principalOf(request).tenant.id, request.params.id);
      const { text, base64, close } = request.body;
      if (text !== undefined && base64 !== undefined)
        throw new InvalidArgumentError("Send the input as `text` or as `base64`, not both.");
      if (base64 !== undefined && !BASE64.test(base64))
        throw new InvalidArgumentError(
          "base64 is not base64 (RFC 4648, padded); send the bytes encoded, or send `text`.",
        );
      const data = text !== undefined ? Buffer.from(text, "utf8") : Buffer.from(base64 ?? "", "base64");
      if (data.length > 0) await processes.write(request.params.pid, data);
      if (close) await processes.closeInput(request.params.pid);
      return reply.code(204).send();
    },
  );

  app.post(
    "/v1/sessions/:id/processes/:pid/signal",
    {
      schema: {
        params: ProcessParamsSchema,
        body: ProcessSignalBodySchema,
        response: { 204: {}, ...ERRORS },
      },
    },
    async (request, reply) => {
      const processes = processesOf(principalOf(request).tenant.id, request.params.id);
      await processes.kill(request.params.pid, (request.body.signal ?? "TERM") as ProcessSignal);
      return reply.code(204).send();
    },
  );

  app.post(
    "/v1/sessions/:id/processes/:pid/resize",
    {
      schema: {
        params: ProcessParamsSchema,
        body: ProcessResizeBodySchema,
        response: { 204: {}, ...ERRORS },
      },
    },
    async (request, reply) => {
      const processes = processesOf(principalOf(request).tenant.id, request.params.id);
      await processes.resize(request.params.pid, request.body);
      return reply.code(204).send();
    },
  );

  app.post(
    "/v1/sessions/:id/processes/:pid/wait",
    {
      schema: {
        params: ProcessParamsSchema,
        querystring: ProcessWaitQuerySchema,
        response: { 200: ProcessSchema, ...ERRORS },
      },
    },
    async (request, reply) => {
      const processes = processesOf(principalOf(request).tenant.id, request.params.id);
      const info = await processes.wait(request.params.pid, {
        timeoutMs: request.query.timeoutMs ?? DEFAULT_WAIT_MS,
        signal: abortOnDisconnect(reply).signal,
      });
      return processJson(info);
    },
  );

  // Checked before the upgrade, so that a refusal is the usual JSON error and status.
  const targets = new WeakMap<FastifyRequest, Omit<AttachTarget, "onClosed">>();
  app.route({
    method: "GET",
    url: "/v1/sessions/:id/processes/:pid/attach",
    schema: {
      params: ProcessParamsSchema,
      querystring: ProcessAttachQuerySchema,
      response: { 400: ErrorSchema, 404: ErrorSchema, 409: ErrorSchema },
    },
    preHandler: async (request, reply) => {
      const tenant = principalOf(request).tenant.id;
      const { id, pid } = request.params;
      const processes = processesOf(tenant, id);
      const live = ctx.registry.get(tenant, id);
      const info = await processes.info(pid, { signal: abortOnDisconnect(reply).signal });
      const offset = request.query.offset ?? info.outputBytes;
      if (offset > info.outputBytes)
        throw new InvalidArgumentError({
          field: "offset",
          problem: `${offset} is past the end of process ${pid}'s output (${info.outputBytes} bytes so far); attach from ${info.outputBytes} or less.`,
        });
      targets.set(request, {
        processes,
        pid,
        offset,
        attached: processJson(info),
        touch: () => {
          live.lastActiveMs = ctx.now();
        },
        onSessionClosed: (listener) =>
          ctx.registry.onRemoved((removed) => {
            if (removed.record.id === id) listener();
          }),
      });
    },
    handler: async () => {
      throw new InvalidArgumentError(
        "This route is a WebSocket: connect with `Upgrade: websocket` (see docs/processes.md).",
      );
    },
    wsHandler: (socket, request) => {
      const target = targets.get(request);
      if (!target) return socket.close(1011, "not checked");
      const start = performance.now();
      auditedByRoute.add(request);
      attachSocket(socket, {
        ...target,
        onClosed: (bytes) => auditRequest(ctx, request, 101, bytes, performance.now() - start),
      });
    },
  });
};
