/** Large tool-call answers serialised in the worker pool: the same bytes as fastify's serializer. */
import SerializerSelector from "@fastify/fast-json-stringify-compiler";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  answerChars,
  largeAnswerJson,
  RESULT_JSON_WORKER_MIN_CHARS,
  resultJsonPool,
} from "../../../../src/server/http/result-json.js";
import { ToolCallsResponseSchema } from "../../../../src/server/http/schemas.js";

afterEach(() => vi.restoreAllMocks());

const lines = (n: number, word: string) =>
  Array.from({ length: n }, (_, i) => `${word} line ${i} "of" the\tfile é ☃`).join("\n");

/** An edit's result with a 12,000-line diff and patch, plus what the schema drops. */
const editResult = {
  role: "toolResult",
  toolCallId: "e",
  toolName: "edit",
  content: [{ type: "text", text: "Successfully replaced 1 block(s) in e.txt." }],
  details: { diff: lines(12_000, "-old"), patch: lines(12_000, "+new"), firstChangedLine: 1 },
  isError: false,
  timestamp: 1,
  notInTheSchema: "dropped",
};

describe("largeAnswerJson", () => {
  it("writes the bytes fastify's serializer writes for the route's schema (extra keys dropped)", async () => {
    const fastify = (
      SerializerSelector as unknown as () => (e: object, o: object) => (r: object) => (v: unknown) => string
    )()(
      {},
      {},
    )({
      schema: ToolCallsResponseSchema,
    });
    const answer = [editResult, { ...editResult, toolCallId: "f", details: undefined }];
    const bytes = await largeAnswerJson(answer);
    expect(bytes?.toString()).toBe(fastify({ results: answer }));
    expect(JSON.parse(bytes?.toString() ?? "").results[0].notInTheSchema).toBeUndefined();
  });

  it("leaves a small answer to fastify (no worker job)", async () => {
    const run = vi.spyOn(resultJsonPool(), "run");
    const small = { ...editResult, details: { diff: "x".repeat(RESULT_JSON_WORKER_MIN_CHARS - 100) } };
    expect(answerChars([small])).toBeLessThan(RESULT_JSON_WORKER_MIN_CHARS);
    expect(await largeAnswerJson([small])).toBeUndefined();
    expect(run).not.toHaveBeenCalled();
  });

  it("counts content texts and details' top-level strings", () => {
    expect(answerChars([editResult])).toBe(
      editResult.content[0]!.text.length + editResult.details.diff.length + editResult.details.patch.length,
    );
    expect(answerChars([null, { content: "no array" }, { details: { nested: { s: "x".repeat(10) } } }])).toBe(
      0,
    );
  });

  it("leaves the answer to fastify when the pool fails (queue full, a worker died)", async () => {
    vi.spyOn(resultJsonPool(), "run").mockRejectedValue(new Error("worker pool queue is full"));
    expect(await largeAnswerJson([editResult])).toBeUndefined();
  });

  it("leaves an answer the structured clone refuses to fastify, and the pool keeps working", async () => {
    const odd = { ...editResult, details: { ...editResult.details, f: () => 1 } };
    expect(await largeAnswerJson([odd])).toBeUndefined();
    expect((await largeAnswerJson([editResult]))?.length).toBeGreaterThan(2 * RESULT_JSON_WORKER_MIN_CHARS);
  });
});
