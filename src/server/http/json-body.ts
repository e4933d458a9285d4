/**
 * Parsing of `application/json` request bodies, off the event loop when large. The parse is
 * fastify's own (secure-json-parse with `__proto__` and `constructor` keys refused; the same
 * FST_ERR_CTP_INVALID_JSON_BODY 400 for bad JSON), and a body of only whitespace is "no body"
 * (`undefined`), since clients often send the header on GET and DELETE without a body.
 *
 * A body of JSON_WORKER_MIN_BYTES or more is decoded and parsed in a worker of the bounded pool
 * (util/worker-pool.ts, lowest CPU priority; json-body-worker.ts); the event loop only copies the bytes there and the
 * parsed value back. Issue 11: the longest command the 1 MiB body limit allows took 2-3 ms of the
 * event loop's CPU to decode and parse (with secure-json-parse's two scans of the text), per request,
 * which another tenant's requests waited behind; the copies left take 1.2-1.4 ms. When the pool's queue is full (or a worker dies)
 * the body is parsed here, as before: never refused for that.
 */
import type { FastifyRequest } from "fastify";
import { errorCodes } from "fastify";
import { lazySharedPool, workerModule } from "../../util/index.js";

/** Bodies of at least this many bytes are parsed in the worker pool; smaller ones inline. */
export const JSON_WORKER_MIN_BYTES = 64 * 1024;

/** The parse of one body: fastify's default JSON parser, as a (request, text) => value function. */
export type InlineJsonParser = (request: FastifyRequest, text: string) => unknown;

/** What the pool's worker (json-body-worker.ts) answers for a body's bytes. */
export type JsonBodyReply = { value?: unknown; invalid?: true };

/** The process-wide JSON pool (lazySharedPool), 64 queued bodies (each at most the body limit); exported for tests. */
export const jsonBodyPool = lazySharedPool<Uint8Array, JsonBodyReply>(
  workerModule(import.meta.url, "json-body-worker"),
  64,
);

/**
 * The value of a JSON body (`undefined` when blank). Rejects FST_ERR_CTP_INVALID_JSON_BODY (HTTP
 * 400) for a body that is not JSON or holds a `__proto__` or `constructor` key.
 */
export async function parseJsonBody(
  request: FastifyRequest,
  body: Buffer,
  inline: InlineJsonParser,
): Promise<unknown> {
  if (body.length >= JSON_WORKER_MIN_BYTES) {
    // A view of part of a larger buffer would send all of that buffer: send exactly the body.
    const exact = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength;
    const reply = await jsonBodyPool()
      .run(exact ? body : new Uint8Array(body))
      .catch(() => undefined); // pool full or a worker died: parse here below
    if (reply?.invalid) throw new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY();
    if (reply) return reply.value;
  }
  const text = body.toString();
  return text.trim() === "" ? undefined : inline(request, text);
}
