import { mkdtemp, rm } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createMemoryAuditLog } from "../../../../src/server/audit.js";
import { SseWriter } from "../../../../src/server/http/sse-writer.js";
import { startServer } from "../../../../src/server/server.js";
import { auth, serverParts, testConfig } from "../../../helpers/server-fakes.js";

/** A writable that holds writes until `release()`; reports backpressure after 64 bytes. */
function slowSink() {
  const written: string[] = [];
  const pending: (() => void)[] = [];
  const sink = new Writable({
    highWaterMark: 64,
    write(chunk: Buffer, _enc, cb) {
      written.push(chunk.toString());
      pending.push(cb);
    },
  });
  return {
    sink,
    written,
    release: () => {
      while (pending.length) pending.shift()!();
    },
  };
}

/** Lets the sink take everything `sse` queued (its `drain` events flush the queue), then settles. */
async function drain(sse: SseWriter, release: () => void): Promise<void> {
  const settled = sse.settle();
  for (let i = 0; i < 10 && sse.queued > 0; i++) {
    release();
    await new Promise((r) => setImmediate(r));
  }
  release();
  await settled;
}

describe("SseWriter: backpressure", () => {
  it("coalesces updates per call while blocked and never drops start, end or results", async () => {
    const { sink, written, release } = slowSink();
    const sse = new SseWriter(sink);
    sse.send("tool_execution_start", { id: "a" });
    for (let i = 0; i < 1000; i++) sse.send("tool_execution_update", { id: "a", i }, "a");
    for (let i = 0; i < 1000; i++) sse.send("tool_execution_update", { id: "b", i }, "b");
    expect(sse.queued).toBe(2);
    sse.dropPending("a");
    sse.send("tool_execution_end", { id: "a" });
    sse.send("results", { n: 1 });
    expect(sse.queued).toBe(3);
    await drain(sse, release);
    const events = written.map((w) => w.split("\n")[0]);
    expect(events).toEqual([
      "event: tool_execution_start",
      "event: tool_execution_update",
      "event: tool_execution_update",
      "event: tool_execution_end",
      "event: results",
    ]);
    expect(written[1]).toBe('event: tool_execution_update\ndata: {"id":"a","i":0}\n\n');
    expect(written[2]).toBe('event: tool_execution_update\ndata: {"id":"b","i":999}\n\n');
    expect(sse.stats.coalesced).toBe(1998);
  });

  it("an event JSON cannot hold, queued while blocked, is written as an error at drain; nothing throws", async () => {
    // Red team: flushed from the socket's `drain` handler, a JSON.stringify that threw (arguments
    // nested 100,000 deep) was an uncaught exception, which ends the server for every tenant.
    const { sink, written, release } = slowSink();
    const sse = new SseWriter(sink);
    sse.send("tool_execution_start", { id: "a", pad: "x".repeat(100) });
    expect(sse.queued).toBe(0);
    sse.send("tool_execution_start", { id: "b", args: 1n });
    sse.send("results", { n: 1 });
    expect(sse.queued).toBe(2);
    await drain(sse, release);
    expect(written.slice(1)).toEqual([
      'event: tool_execution_start\ndata: {"code":"INTERNAL","message":"The tool_execution_start event could not be serialized (Do not know how to serialize a BigInt)."}\n\n',
      'event: results\ndata: {"n":1}\n\n',
    ]);
  });

  it("a slow HTTP reader gets every end event and the results while updates are coalesced", async () => {
    const dir = await mkdtemp(join(tmpdir(), "warden-sse-"));
    const server = await startServer({
      config: testConfig(dir),
      ...serverParts(),
      audit: createMemoryAuditLog(),
    });
    try {
      const sid = (
        await server.app.inject({ method: "POST", url: "/v1/sessions", headers: auth("alpha"), payload: {} })
      ).json().id;
      const count = 4000;
      const bytes = 16 * 1024;
      const body = JSON.stringify({
        toolCalls: [
          { id: "s1", name: "spam", arguments: { count, bytes } },
          { id: "s2", name: "spam", arguments: { count, bytes } },
        ],
      });
      const heapBefore = process.memoryUsage().heapUsed;
      let heapPeak = heapBefore;
      const text = await new Promise<string>((resolve, reject) => {
        const req = httpRequest(`${server.url}/v1/sessions/${sid}/tool-calls`, {
          method: "POST",
          headers: { ...auth("alpha"), accept: "text/event-stream", "content-type": "application/json" },
        });
        req.on("response", (res) => {
          res.pause();
          const chunks: Buffer[] = [];
          // Read slowly: a little every 20 ms.
          const timer = setInterval(() => {
            heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed);
            for (let i = 0; i < 4; i++) {
              const c = res.read() as Buffer | null;
              if (c) chunks.push(c);
            }
          }, 20);
          res.on("end", () => {
            clearInterval(timer);
            resolve(Buffer.concat(chunks).toString());
          });
          res.on("readable", () => {});
        });
        req.on("error", reject);
        req.end(body);
      });
      const events = text
        .split("\n\n")
        .filter(Boolean)
        .map((b) => b.split("\n")[0]);
      expect(events.filter((e) => e === "event: tool_execution_end")).toHaveLength(2);
      expect(events.at(-1)).toBe("event: results");
      const updates = events.filter((e) => e === "event: tool_execution_update").length;
      expect(updates).toBeLessThan(2 * count);
      expect(heapPeak - heapBefore).toBeLessThan(64 * 1024 * 1024);
    } finally {
      await server.shutdown(0);
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
