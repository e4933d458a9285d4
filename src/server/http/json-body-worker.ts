/**
 * The worker module of json-body.ts's pool (util/worker-pool.ts): a body's bytes in; `{ value }`
 * (undefined for a blank body) or `{ invalid: true }` out, parsed by secure-json-parse as fastify
 * itself loads it (`__proto__` and `constructor` keys refused), so both paths parse alike.
 */
import { createRequire } from "node:module";
import type { JsonBodyReply } from "./json-body.js";

const secureJsonParse = createRequire(createRequire(import.meta.url).resolve("fastify"))(
  "secure-json-parse",
) as {
  parse(text: string, options: { protoAction: "error"; constructorAction: "error" }): unknown;
};

/** The parse of `bytes` (never throws: a body that is not JSON is `{ invalid: true }`). */
export function runJob(bytes: Uint8Array): JsonBodyReply {
  try {
    const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString();
    return text.trim() === ""
      ? { value: undefined }
      : { value: secureJsonParse.parse(text, { protoAction: "error", constructorAction: "error" }) };
  } catch {
    return { invalid: true };
  }
}
