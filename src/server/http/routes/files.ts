/**
 * PUT/GET /v1/sessions/:id/files?path=: one workspace file's bytes, for agents that do not speak in
 * tool calls. Paths are confined to /workspace as the tools' are (lexically, then by their canonical
 * target resolved inside the sandbox). A PUT is never written through a symlink: a path whose
 * canonical target differs from the path itself is refused. Both directions are limited to the
 * config's `filesMaxBytes` (413 naming it), and a file read is held against the tenant's and the
 * server's maxBufferedBytes until its response is over (buffered-bytes.ts). Like the workspace
 * download, these routes are the tenant's own API: the tool-call policy does not judge them.
 */
import type { Readable } from "node:stream";
import {
  InvalidArgumentError,
  NotFoundError,
  PathOutsideWorkspaceError,
  PayloadTooLargeError,
} from "../../../errors.js";
import type { FileStat, Sandbox } from "../../../sandbox/index.js";
import { WORKSPACE_DIR } from "../../../sandbox/index.js";
import { isWithinRoot, normalizeToolPath } from "../../../tools/index.js";
import { abortOnDisconnect } from "../abort-on-disconnect.js";
import { type BufferedBytes, holdUntilResponseOver, mediaTypeOf } from "../buffered-bytes.js";
import { endIfStalled } from "../response-over.js";
import { principalOf, type RoutePlugin, type ServerContext } from "../route-context.js";
import { ErrorSchema, FilesQuerySchema, FileWrittenSchema, SessionParamsSchema } from "../schemas.js";

/** A 413 (PayloadTooLargeError) whose message names the limit. */
function tooLarge(what: string, maxBytes: number): PayloadTooLargeError {
  return new PayloadTooLargeError(
    `${what} is over filesMaxBytes (${maxBytes} bytes); raise filesMaxBytes in the server config.`,
  );
}

/** "is a directory", "is a FIFO, socket or device": what a path that is not a regular file is. */
function kindOf(type: FileStat["type"]): string {
  return type === "other" ? "a FIFO, socket or device" : `a ${type}`;
}

/**
 * The path's canonical target, which must be a file path inside /workspace: outside it is 403
 * PATH_OUTSIDE_WORKSPACE, /workspace itself or a path ending in "/" a 400 (a directory, not a file).
 */
async function workspacePath(sandbox: Sandbox, input: string, signal: AbortSignal) {
  // Normalising drops a trailing "/", which names a directory: `PUT new/` would write a file "new".
  if (input.endsWith("/")) {
    throw new InvalidArgumentError(
      `Path '${input}' ends with '/', which names a directory; name a file (without the trailing '/').`,
    );
  }
  const requested = normalizeToolPath(input);
  if (!isWithinRoot(requested, WORKSPACE_DIR)) throw new PathOutsideWorkspaceError(input, requested);
  const canonical = requested === WORKSPACE_DIR ? requested : await sandbox.realpath(requested, { signal });
  if (!isWithinRoot(canonical, WORKSPACE_DIR)) throw new PathOutsideWorkspaceError(input, canonical);
  if (canonical === WORKSPACE_DIR) {
    throw new InvalidArgumentError(
      `Path '${input}' is the workspace directory itself; name a file in it (e.g. 'dir/file.txt').`,
    );
  }
  return { requested, canonical };
}

/**
 * Reads `body` up to `maxBytes`; past it, the rest is read and dropped (so the 413 answer reaches
 * the client on an open connection) and the promise rejects with a 413 naming filesMaxBytes.
 */
function readBody(body: Readable, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    body.on("data", (chunk: Buffer) => {
      total += chunk.length;
      if (total <= maxBytes) chunks.push(chunk);
      else chunks.length = 0;
    });
    body.once("end", () =>
      total > maxBytes ? reject(tooLarge("The file body", maxBytes)) : resolve(Buffer.concat(chunks)),
    );
    body.once("error", reject);
  });
}

/** The error answers of both files routes (429/503: maxBufferedBytes, buffered-bytes.ts). */
const FILE_ERRORS = {
  400: ErrorSchema,
  403: ErrorSchema,
  404: ErrorSchema,
  413: ErrorSchema,
  429: ErrorSchema,
  503: ErrorSchema,
};

/**
 * The files routes (bodies: `application/octet-stream`, whose parser app.ts registers for every
 * route group, held against `buffered` by the app's preParsing hook; file reads held here).
 */
export const fileRoutes: RoutePlugin<{ ctx: ServerContext; buffered: BufferedBytes }> = async (
  app,
  { ctx, buffered },
) => {
  app.put(
    "/v1/sessions/:id/files",
    {
      config: { bufferedBody: "files" },
      schema: {
        params: SessionParamsSchema,
        querystring: FilesQuerySchema,
        response: { 200: FileWrittenSchema, ...FILE_ERRORS },
      },
    },
    async (request, reply) => {
      const { tenant } = principalOf(request);
      const live = ctx.registry.get(tenant.id, request.params.id);
      if (
        mediaTypeOf(request) !== "application/octet-stream" ||
        !(request.body && typeof (request.body as Readable).pipe === "function")
      ) {
        throw new InvalidArgumentError("Send the file's bytes with content-type application/octet-stream.");
      }
      const max = ctx.config.filesMaxBytes;
      if (Number(request.headers["content-length"] ?? 0) > max) throw tooLarge("The file body", max);
      const data = await readBody(request.body as Readable, max);
      const controller = abortOnDisconnect(reply);
      const { sandbox } = live.session;
      const { requested, canonical } = await workspacePath(sandbox, request.query.path, controller.signal);
      if (canonical !== requested) {
        throw new InvalidArgumentError(
          `Path '${request.query.path}' goes through a symlink (it resolves to '${canonical}'); files are not written through symlinks: name the target path.`,
        );
      }
      const stat = await sandbox.stat(canonical, { signal: controller.signal });
      if (stat && stat.type !== "file") {
        throw new InvalidArgumentError(
          `${request.query.path} is ${kindOf(stat.type)}; only regular files are written.`,
        );
      }
      await sandbox.writeFile(canonical, data, { signal: controller.signal });
      return { path: canonical, bytes: data.length };
    },
  );

  app.get(
    "/v1/sessions/:id/files",
    {
      schema: {
        params: SessionParamsSchema,
        querystring: FilesQuerySchema,
        response: FILE_ERRORS,
      },
    },
    async (request, reply) => {
      const { tenant } = principalOf(request);
      const live = ctx.registry.get(tenant.id, request.params.id);
      const controller = abortOnDisconnect(reply);
      const { sandbox } = live.session;
      const { canonical } = await workspacePath(sandbox, request.query.path, controller.signal);
      const stat = await sandbox.stat(canonical, { signal: controller.signal });
      if (!stat) throw new NotFoundError(`No file '${request.query.path}' in the workspace.`);
      if (stat.type !== "file") {
        throw new InvalidArgumentError(
          `${request.query.path} is ${kindOf(stat.type)}; only regular files are read.`,
        );
      }
      const max = ctx.config.filesMaxBytes;
      if (stat.size > max) throw tooLarge(`File '${request.query.path}' (${stat.size} bytes)`, max);
      holdUntilResponseOver(buffered, tenant, reply).growTo(stat.size);
      endIfStalled(reply.raw, ctx.config.httpRequestTimeoutMs);
      const { data } = await sandbox.readFile(
        canonical,
        { kind: "bytes", offset: 0, length: stat.size },
        { signal: controller.signal },
      );
      return reply.type("application/octet-stream").send(data as never);
    },
  );
};
