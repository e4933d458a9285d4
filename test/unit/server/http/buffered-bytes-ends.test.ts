/**
 * How the bytes a request holds (src/server/http/buffered-bytes.ts) are given back, whichever way its
 * response ends: an unread file answer (until its connection closes, or it stalls for
 * httpRequestTimeoutMs), pipelined answers queued behind it (their own `close` never comes), a
 * request not sent in time (408 in the server's error shape), and a client reset after an answer
 * sent without reading the body (which once ended the server with an unheard stream error).
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ServerConfig } from "../../../../src/server/config/index.js";
import { bufferedServer, MiB } from "../../../helpers/buffered-server.js";
import { auth } from "../../../helpers/server-fakes.js";

describe("warden serve: bytes held until the response is over", () => {
  const s = bufferedServer();
  afterEach(() => s.stop());

  /** A 32 MiB file in session `a` and a GET of it whose answer is read up to its first bytes only. */
  async function unreadGet(a: string, count = 1) {
    expect((await s.put(a, "alpha", 32 * MiB)).status).toBe(200);
    // The kernel's socket buffers take a few MiB; the server keeps the rest of each answer.
    const unread = s.raw(Array(count).fill(s.getHead(a, "alpha")).join("\r\n\r\n"));
    unread.socket.once("data", () => unread.socket.pause());
    await expect.poll(() => unread.received()).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    return unread;
  }

  it("an unread file GET holds its bytes until its connection ends", async () => {
    await s.serve(40 * MiB, (c) => {
      c.filesMaxBytes = 32 * MiB;
    });
    const a = await s.create("alpha");
    const unread = await unreadGet(a);
    expect(await s.gauge()).toContain('{tenant="alpha"} 33554432');
    const refused = await s.get(a, "alpha");
    expect(refused.status).toBe(429);
    expect(refused.text).toContain("holds 33554432 bytes");
    unread.socket.destroy();
    await expect.poll(() => s.gauge()).toContain('{tenant="alpha"} 0');
    expect((await s.get(a, "alpha")).status).toBe(200);
  });

  it("pipelined GETs queued behind an unread one give their bytes back when the client leaves", async () => {
    await s.serve(200 * MiB, (c) => {
      c.filesMaxBytes = 32 * MiB;
    });
    const a = await s.create("alpha");
    const unread = await unreadGet(a, 3);
    await expect.poll(() => s.gauge()).toContain('{tenant="alpha"} 100663296');
    unread.socket.destroy();
    await expect.poll(() => s.gauge()).toContain('{tenant="alpha"} 0');
  });

  it("an answer the client stops taking for httpRequestTimeoutMs ends its connection and its bytes", async () => {
    await s.serve(40 * MiB, (c) => {
      c.filesMaxBytes = 32 * MiB;
      c.httpRequestTimeoutMs = 2000;
    });
    const a = await s.create("alpha");
    await unreadGet(a);
    // The client, paused, never reads the server's end of the connection: the server's count shows it.
    await expect.poll(() => s.gauge()).toContain('{tenant="alpha"} 0');
  });

  it("a request not sent within httpRequestTimeoutMs gets 408 naming it, and its bytes are released", async () => {
    await s.serve(MiB, (c) => {
      c.httpRequestTimeoutMs = 400;
    });
    const a = await s.create("alpha");
    const slow = s.raw(s.putHead(a, "alpha", MiB), "partial");
    await slow.closed;
    expect(slow.received()).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(slow.received()).toContain(
      '{"code":"TIMEOUT","message":"The request was not sent within httpRequestTimeoutMs (400 ms); send it faster, or raise httpRequestTimeoutMs in the server config."}',
    );
    expect((await s.put(a, "alpha", MiB)).status).toBe(200);
  });

  it("a client that resets after an answer sent without reading its body (a 404) leaves the server running", async () => {
    await s.serve(40 * MiB, (c) => {
      c.filesMaxBytes = 32 * MiB;
    });
    const a = await s.create("alpha");
    expect((await s.put(a, "alpha", 32 * MiB)).status).toBe(200);
    // The PUT to an unknown session waits behind an unread GET, its body partly sent, never read.
    const put = s.putHead("nope", "alpha", 100_000);
    const conn = s.raw(`${s.getHead(a, "alpha")}\r\n\r\n${put}`, "x".repeat(1000));
    conn.socket.once("data", () => conn.socket.pause());
    await expect.poll(() => conn.received()).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    conn.socket.resetAndDestroy();
    await expect.poll(() => s.gauge()).toContain('{tenant="alpha"} 0');
    expect((await fetch(`${s.url()}/healthz`)).status).toBe(200);
  });
});

describe("warden serve: a tool-call answer holds its calls' slots until it is delivered", () => {
  const s = bufferedServer();
  afterEach(() => s.stop());

  /** A batch of one echo call whose answer (12 MiB, JSON or SSE) is read up to its first bytes only. */
  async function unreadAnswer(a: string, stream = false) {
    const body = JSON.stringify({
      toolCalls: [{ id: "big", name: "echo", arguments: { text: "x".repeat(12 * MiB) } }],
    });
    const head = s.callsHead(a, "alpha", body.length) + (stream ? "\r\naccept: text/event-stream" : "");
    const unread = s.raw(head, body);
    unread.socket.once("data", () => unread.socket.pause());
    await expect.poll(() => unread.received()).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    return unread;
  }
  const batchOf = (a: string, n: number) =>
    fetch(`${s.url()}/v1/sessions/${a}/tool-calls`, {
      method: "POST",
      headers: { ...auth("alpha"), "content-type": "application/json" },
      body: JSON.stringify({
        toolCalls: Array.from({ length: n }, (_, i) => ({
          id: `c${i}`,
          name: "echo",
          arguments: { text: "hi" },
        })),
      }),
    });
  const big =
    (timeoutMs = 120_000) =>
    (c: ServerConfig) => {
      c.jsonBodyLimitBytes = 16 * MiB;
      c.httpRequestTimeoutMs = timeoutMs;
    };

  it("an unread answer keeps its slot (maxConcurrentToolCalls 4: a batch of 4 is refused) until the client leaves", async () => {
    await s.serve(64 * MiB, big());
    const a = await s.create("alpha");
    const unread = await unreadAnswer(a);
    const refused = await batchOf(a, 4);
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { message: string }).message).toBe(
      "Tenant 'alpha' would have 5 tool calls running, over its maxConcurrentToolCalls 4; retry after the running calls finish.",
    );
    expect((await batchOf(a, 3)).status).toBe(200);
    unread.socket.destroy();
    await expect.poll(async () => (await batchOf(a, 4)).status).toBe(200);
  });

  it("an unread SSE stream keeps its slot too, until it stalls for httpRequestTimeoutMs", async () => {
    await s.serve(64 * MiB, big(1500));
    const a = await s.create("alpha");
    await unreadAnswer(a, true);
    expect((await batchOf(a, 4)).status).toBe(429);
    await expect.poll(async () => (await batchOf(a, 4)).status).toBe(200);
  });

  it("an answer the client stops taking for httpRequestTimeoutMs ends, and gives its slot back", async () => {
    await s.serve(64 * MiB, big(500));
    const a = await s.create("alpha");
    await unreadAnswer(a);
    await expect.poll(async () => (await batchOf(a, 4)).status).toBe(200);
  });

  it("after an answer is out, its connection has no stall timeout left: a silent call pipelined behind it is not cut", async () => {
    await s.serve(MiB, (c) => {
      c.httpRequestTimeoutMs = 300;
    });
    const a = await s.create("alpha");
    expect((await s.put(a, "alpha", 10)).status).toBe(200);
    const body = JSON.stringify({ toolCalls: [{ id: "s", name: "sleep", arguments: { ms: 1000 } }] });
    const post = s.callsHead(a, "alpha", body.length);
    // Pipelined: the call waits behind the file answer, so Node sets no idle timeout between them.
    const conn = s.raw(`${s.getHead(a, "alpha")}\r\n\r\n${post}`, body);
    await expect.poll(() => conn.received()).toContain('"text":"slept"');
  });

  it("a body sent to /v1 or /mcp without a valid key gets 401 and the connection closed, unread", async () => {
    await s.serve(MiB);
    const heads = [
      "POST /v1/sessions HTTP/1.1\r\nhost: x",
      "POST /v1/sessions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer wrong",
      "POST /mcp HTTP/1.1\r\nhost: x\r\naccept: application/json, text/event-stream",
    ];
    for (const head of heads) {
      const refused = s.raw(`${head}\r\ncontent-type: application/json\r\ncontent-length: 1048576`, "{");
      await refused.closed;
      expect(refused.received()).toMatch(/^HTTP\/1\.1 401 Unauthorized\r\n/);
      expect(refused.received()).toMatch(/\r\nconnection: close\r\n/i);
    }
  });
});
