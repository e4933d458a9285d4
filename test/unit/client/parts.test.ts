/** The TypeScript client's pure parts: SSE parsing, Retry-After, and its imports (nothing of the server at run time). */
import { readdir, readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { parseSse, retryAfterSeconds } from "../../../src/client/index.js";

function streamOf(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const c of chunks) controller.enqueue(encoder.encode(c));
      controller.close();
    },
  });
}

describe("parseSse", () => {
  it("parses events split across chunks, joins data lines and skips comments", async () => {
    const events = [];
    for await (const e of parseSse(
      streamOf(["event: a\nda", 'ta: {"x":1}\n\n: comment\n', "data: l1\ndata: l2\n\n"]),
    ))
      events.push(e);
    expect(events).toEqual([
      { event: "a", data: '{"x":1}' },
      { event: "message", data: "l1\nl2" },
    ]);
  });
});

describe("retryAfterSeconds", () => {
  it("reads delta-seconds and HTTP dates; falls back when absent or unreadable", () => {
    expect(retryAfterSeconds("3")).toBe(3);
    expect(
      retryAfterSeconds("Wed, 21 Oct 2015 07:28:05 GMT", 1, Date.parse("Wed, 21 Oct 2015 07:28:00 GMT")),
    ).toBe(5);
    expect(retryAfterSeconds(null, 2)).toBe(2);
    expect(retryAfterSeconds("soon", 2)).toBe(2);
  });
});

describe("client imports", () => {
  it("src/client loads nothing of the server at run time (type-only imports of its schemas)", async () => {
    const dir = new URL("../../../src/client/", import.meta.url);
    for (const file of await readdir(dir)) {
      const source = await readFile(new URL(file, dir), "utf8");
      const runtime = [...source.matchAll(/^import (?!type )[^;]*from "([^"]+)"/gm)].map((m) => m[1]);
      for (const spec of runtime) expect(spec, file).toMatch(/^(\.\/|\.\.\/errors\.js$)/);
    }
  });
});
