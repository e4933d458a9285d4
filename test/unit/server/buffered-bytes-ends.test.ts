/**
 * How the bytes a request holds (src/server/buffered-bytes.ts) are given back, whichever way its
 * response ends: an unread file answer (until its connection closes, or it stalls for
 * httpRequestTimeoutMs), pipelined answers queued behind it (their own `close` never comes), a
 * request not sent in time (408 in the server's error shape), and a client reset after an answer
 * sent without reading the body (which once ended the server with an unheard stream error).
 */
import { afterEach, describe, expect, it } from "vitest";
import { bufferedServer, MiB } from "../../helpers/buffered-server.js";

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
    await expect.poll(() => s.gauge(), { timeout: 5000 }).toContain('{tenant="alpha"} 0');
    expect((await s.get(a, "alpha")).status).toBe(200);
  });

  it("pipelined GETs queued behind an unread one give their bytes back when the client leaves", async () => {
    await s.serve(200 * MiB, (c) => {
      c.filesMaxBytes = 32 * MiB;
    });
    const a = await s.create("alpha");
    const unread = await unreadGet(a, 3);
    await expect.poll(() => s.gauge(), { timeout: 5000 }).toContain('{tenant="alpha"} 100663296');
    unread.socket.destroy();
    await expect.poll(() => s.gauge(), { timeout: 5000 }).toContain('{tenant="alpha"} 0');
  });

  it("an answer the client stops taking for httpRequestTimeoutMs ends its connection and its bytes", async () => {
    await s.serve(40 * MiB, (c) => {
      c.filesMaxBytes = 32 * MiB;
      c.httpRequestTimeoutMs = 500;
    });
    const a = await s.create("alpha");
    await unreadGet(a);
    // The client, paused, never reads the server's end of the connection: the server's count shows it.
    await expect.poll(() => s.gauge(), { timeout: 5000 }).toContain('{tenant="alpha"} 0');
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
    await expect.poll(() => s.gauge(), { timeout: 5000 }).toContain('{tenant="alpha"} 0');
    expect((await fetch(`${s.url()}/healthz`)).status).toBe(200);
  });
});
