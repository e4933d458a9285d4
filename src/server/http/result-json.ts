/**
 * The JSON of a large tool-call answer (`{results}`), serialised off the event loop. Issue 11: an
 * edit that rewrites 12,000 lines answers with its display diff and patch (~1.4 MB of text), and
 * serialising that on the event loop took ~5 ms of its CPU per edit (another tenant's requests
 * waited behind it); a worker of the bounded pool (util/worker-pool.ts, lowest CPU priority;
 * result-json-worker.ts) now writes the same bytes, with the route's own response schema compiled by the same serializer
 * fastify uses (fast-json-stringify through @fastify/fast-json-stringify-compiler), and the event
 * loop only copies the results there and the bytes back. Small answers, and a full queue or a dead
 * worker, are left to fastify's serializer as before.
 */
import type { FastifyReply } from "fastify";
import { lazySharedPool, runOrFallBack, workerModule } from "../../util/index.js";

/** Answers whose strings (content texts and top-level details strings) reach this many UTF-16 units. */
export const RESULT_JSON_WORKER_MIN_CHARS = 64 * 1024;

/** The process-wide answer pool (lazySharedPool), 32 queued answers; exported for tests. */
export const resultJsonPool = lazySharedPool<{ results: unknown[] }, Uint8Array>(
  workerModule(import.meta.url, "result-json-worker"),
  32,
);

/** UTF-16 units of an answer's large strings: content texts and details' top-level string values. */
export function answerChars(results: readonly unknown[]): number {
  let chars = 0;
  for (const result of results) {
    if (typeof result !== "object" || result === null) continue;
    const { content, details } = result as { content?: unknown; details?: unknown };
    if (Array.isArray(content))
      for (const part of content) {
        const text = (part as { text?: unknown } | null)?.text;
        if (typeof text === "string") chars += text.length;
      }
    if (typeof details === "object" && details !== null)
      for (const value of Object.values(details)) if (typeof value === "string") chars += value.length;
  }
  return chars;
}

/**
 * The JSON bytes of `{results}` from the worker pool when the answer is large
 * (RESULT_JSON_WORKER_MIN_CHARS), else undefined (the caller lets fastify serialise it); undefined
 * too when the pool's queue is full or its worker died.
 */
export async function largeAnswerJson(results: readonly unknown[]): Promise<Buffer | undefined> {
  if (answerChars(results) < RESULT_JSON_WORKER_MIN_CHARS) return undefined;
  const bytes = await runOrFallBack(resultJsonPool(), { results: [...results] });
  return bytes && Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Sends JSON bytes already serialised (by largeAnswerJson) as the answer, past the route's serializer. */
export function sendJsonBytes(reply: FastifyReply, json: Buffer): FastifyReply {
  return reply.type("application/json; charset=utf-8").send(json);
}
