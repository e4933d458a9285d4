/**
 * The bytes of request bodies and file reads `warden serve` holds in memory at once, bounded per
 * tenant (quotas.maxBufferedBytes) and over the whole server (maxBufferedBytes). Issue 11, an
 * attack: each body was limited, but not how many were held at once: 400 held-open 8 MiB
 * `PUT /files` bodies took the server from 195 MB to 3.43 GB, and 150 unread 8 MiB file GETs to
 * 1.36 GB. A hold is taken as bytes arrive (or, for a declared length, before any is read) and
 * released when the response is over (its socket closed or its last byte handed on), so a client
 * that never reads its answer keeps its own tenant's bytes, never another's.
 *
 * What is counted is bytes received and read, not what they become: a parsed JSON body can take
 * several times its bytes of heap. A workspace tar is not counted: it is streamed to disk with
 * backpressure (sessions/upload.ts). Bodies of requests without an API key are refused unread, since no
 * route outside /v1 and /mcp takes one.
 */
import { finished, Transform } from "node:stream";
import type { FastifyReply, FastifyRequest } from "fastify";
import { InvalidArgumentError, NoRoomError, NotFoundError } from "../../errors.js";
import type { ServerConfig, TenantConfig } from "../config/index.js";
import type { ServerMetrics } from "../metrics.js";
import { QuotaExceededError, RETRY_AFTER_SECONDS } from "../tenancy/index.js";
import { onResponseOver } from "./response-over.js";

/** Bytes one tenant holds, growing as its body arrives; `release` (idempotent) gives them back. */
export class BufferHold {
  private held = 0;
  private released = false;

  constructor(
    readonly tenant: TenantConfig,
    private readonly take: (n: number) => void,
    private readonly give: (n: number) => void,
  ) {}

  /** Bytes held now. */
  get bytes(): number {
    return this.held;
  }

  /**
   * Raises the hold to `total` bytes (no-op when it holds that many, or was released). Throws
   * QuotaExceededError (429) past the tenant's quotas.maxBufferedBytes, NoRoomError (503) past the
   * server's maxBufferedBytes; the hold is unchanged then.
   */
  growTo(total: number): void {
    if (this.released || total <= this.held) return;
    this.take(total - this.held);
    this.held = total;
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    this.give(this.held);
  }
}

/** The server's and each tenant's held bytes. */
export class BufferedBytes {
  private total = 0;
  private readonly byTenant = new Map<string, number>();

  /** `serverMax`: the config's maxBufferedBytes (bytes). */
  constructor(
    private readonly serverMax: number,
    private readonly metrics?: Pick<ServerMetrics, "rateLimited" | "bufferedBytes">,
  ) {}

  /** An empty hold for `tenant`. */
  hold(tenant: TenantConfig): BufferHold {
    return new BufferHold(
      tenant,
      (n) => this.take(tenant, n),
      (n) => this.give(tenant.id, n),
    );
  }

  /** Bytes held for `tenant`, or by the whole server when absent. */
  held(tenant?: string): number {
    return tenant === undefined ? this.total : (this.byTenant.get(tenant) ?? 0);
  }

  private take(tenant: TenantConfig, n: number): void {
    const mine = this.held(tenant.id);
    const max = tenant.quotas.maxBufferedBytes;
    if (mine + n > max) {
      this.metrics?.rateLimited.inc({ tenant: tenant.id, quota: "maxBufferedBytes" });
      throw new QuotaExceededError(
        `Tenant '${tenant.id}' holds ${mine} bytes of request bodies and file reads in the server's memory; ` +
          `${n} more would pass its quotas.maxBufferedBytes (${max}); retry once its other requests finish, ` +
          "or raise quotas.maxBufferedBytes in the server config.",
        RETRY_AFTER_SECONDS,
      );
    }
    if (this.total + n > this.serverMax) {
      this.metrics?.rateLimited.inc({ tenant: tenant.id, quota: "server.maxBufferedBytes" });
      const err = new NoRoomError(
        `The server holds ${this.total} bytes of request bodies and file reads in memory; ${n} more would ` +
          `pass its maxBufferedBytes (${this.serverMax}); room frees as those requests finish.`,
      );
      err.retryAfterSeconds = RETRY_AFTER_SECONDS;
      throw err;
    }
    this.total += n;
    this.byTenant.set(tenant.id, mine + n);
    this.metrics?.bufferedBytes.set({ tenant: tenant.id }, mine + n);
  }

  private give(tenant: string, n: number): void {
    this.total -= n;
    const left = this.held(tenant) - n;
    if (left > 0) this.byTenant.set(tenant, left);
    else this.byTenant.delete(tenant);
    this.metrics?.bufferedBytes.set({ tenant }, Math.max(left, 0));
  }
}

/**
 * An empty hold for `tenant`, released when `reply`'s response is over (response-over.ts: its last
 * byte handed to the socket, or the socket closed; at once when that has already happened).
 */
export function holdUntilResponseOver(
  buffered: BufferedBytes,
  tenant: TenantConfig,
  reply: FastifyReply,
): BufferHold {
  const hold = buffered.hold(tenant);
  onResponseOver(reply.raw, () => hold.release());
  return hold;
}

/** How a route's body is buffered (its `config.bufferedBody`): see bufferedCap. */
type BufferedBody = "files" | "json-or-tar";

declare module "fastify" {
  interface FastifyContextConfig {
    /** How the route's body is buffered; absent: a JSON body (buffered-bytes.ts). */
    bufferedBody?: BufferedBody;
  }
}

/** The request's media type in lower case, without parameters ("" when absent). */
export function mediaTypeOf(request: Pick<FastifyRequest, "headers">): string {
  return (request.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

/** "METHOD /path" of a request, without its query string. */
function routeOf(request: Pick<FastifyRequest, "method" | "url">): string {
  return `${request.method} ${request.url.split("?")[0]}`;
}

/** The message of the 404 for a request no route matches (the app's not-found handler's too). */
export function noRouteMessage(request: Pick<FastifyRequest, "method" | "url">): string {
  return `No route ${routeOf(request)}.`;
}

/** Whether the request says it has a body (a non-zero Content-Length, or any Transfer-Encoding). */
export function hasBody(request: Pick<FastifyRequest, "headers">): boolean {
  const length = request.headers["content-length"];
  return (length !== undefined && length !== "0") || request.headers["transfer-encoding"] !== undefined;
}

/**
 * The most bytes of `request`'s body the server may buffer, by its route (never by the client's
 * content type alone, which chooses the parser: an x-tar body sent to the files route is buffered
 * there like any other): filesMaxBytes for the files route, none for a workspace tar on the route
 * that streams it to disk, else the JSON body limit. Past it the route's own 413 applies.
 */
function bufferedCap(request: FastifyRequest, config: ServerConfig): number {
  const route = request.routeOptions.config?.bufferedBody;
  if (route === "files") return config.filesMaxBytes;
  if (route === "json-or-tar" && mediaTypeOf(request) === "application/x-tar") return 0;
  return config.jsonBodyLimitBytes;
}

/**
 * The preParsing hook: counts `payload`'s bytes (up to the route's cap) against its tenant's and
 * the server's bound until the response is over. A declared Content-Length is taken before any
 * byte is read; a refusal answers with `Connection: close`, so the rest of the body is never read.
 * A request without an API key (outside /v1 and /mcp) that has a body is refused unread: 404 for
 * an unknown route, else 400.
 */
export function holdRequestBody(
  buffered: BufferedBytes,
  config: ServerConfig,
  request: FastifyRequest,
  reply: FastifyReply,
  payload: NodeJS.ReadableStream,
): NodeJS.ReadableStream {
  if (!hasBody(request)) return payload;
  const refuse = (err: unknown) => {
    reply.header("connection", "close");
    return err;
  };
  if (!request.principal) {
    if (request.is404) throw refuse(new NotFoundError(noRouteMessage(request)));
    throw refuse(new InvalidArgumentError(`${routeOf(request)} takes no request body; send it without one.`));
  }
  const cap = bufferedCap(request, config);
  if (cap === 0) return payload;
  const hold = holdUntilResponseOver(buffered, request.principal.tenant, reply);
  const declared = Number(request.headers["content-length"] ?? 0);
  try {
    hold.growTo(Math.min(Number.isFinite(declared) ? declared : 0, cap));
  } catch (err) {
    throw refuse(err);
  }
  let seen = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      Object.assign(counter, { receivedEncodedLength: seen }); // fastify compares it with Content-Length
      try {
        hold.growTo(Math.min(seen, cap));
        callback(null, chunk);
      } catch (err) {
        callback(refuse(err) as Error);
      }
    },
  });
  // Whoever reads the body reports its errors; a route that answered without reading it (a 404,
  // a 413 on the declared length) has no reader, and an unheard 'error' would end the process.
  counter.on("error", () => {});
  // A client gone midway (or cut by httpRequestTimeoutMs) ends the counter too, so no reader waits.
  finished(payload, (err) => {
    if (err) counter.destroy(err);
  });
  return payload.pipe(counter);
}
