/**
 * The worker module of result-json.ts's pool (util/worker-pool.ts): a tool-call answer (`{results}`)
 * in, its JSON's UTF-8 bytes out, written by fast-json-stringify as fastify's serializer compiler
 * loads it, with the route's response schema (ToolCallsResponseSchema as JSON), so both paths write
 * alike.
 */
import { createRequire } from "node:module";
import { ToolCallsResponseSchema } from "./schemas.js";

const requireFrom = (path: string) => createRequire(path);
const compilerPath = requireFrom(requireFrom(import.meta.url).resolve("fastify")).resolve(
  "@fastify/fast-json-stringify-compiler",
);
const fastJsonStringify = requireFrom(compilerPath)("fast-json-stringify") as (
  schema: unknown,
  options: { schema: Record<string, unknown> },
) => (value: unknown) => string;
const serialize = fastJsonStringify(JSON.parse(JSON.stringify(ToolCallsResponseSchema)), { schema: {} });

/** The JSON of `answer` as UTF-8 bytes. */
export function runJob(answer: { results: unknown[] }): Buffer {
  return Buffer.from(serialize(answer));
}
