/**
 * attack-38a: an MCP tools/call's progress notifications are dropped, not queued, while the stream
 * that carries them takes no more (src/server/http/mcp-answer-slots.ts `congested`, the tool server's
 * `progressCongested`), as REST's SSE writer coalesces its updates: a client that never reads
 * holds no more than a socket's buffers of them in the server. Before, each one was queued in the
 * server's memory until the call ended (with a 500 KB progress token, four unread calls grew a
 * server by ~20 MB a second). A real listener over the fake backend; its `spam` tool emits 60,000
 * updates of 400 characters (about 30 MB of notifications) while the raw POST's socket is paused.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import { bufferedServer, MiB } from "../../../helpers/buffered-server.js";
import { auth } from "../../../helpers/server-fakes.js";

const UPDATES = 60_000;

describe("warden serve: MCP progress notifications of an unread stream", () => {
  const s = bufferedServer();
  const clients: Client[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close();
    await s.stop();
  });

  it("are dropped while the stream is not draining; the answer and the numbering stay whole", async () => {
    await s.serve(64 * MiB);
    const client = new Client({ name: "warden-test", version: "1" });
    const transport = new StreamableHTTPClientTransport(new URL(`${s.url()}/mcp`), {
      requestInit: { headers: auth("alpha") },
    });
    await client.connect(transport);
    clients.push(client);
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: "spam",
      method: "tools/call",
      params: { name: "spam", arguments: { count: UPDATES, bytes: 400 }, _meta: { progressToken: "p" } },
    });
    const head = [
      "POST /mcp HTTP/1.1",
      "host: x",
      `authorization: ${auth("alpha").authorization}`,
      "accept: application/json, text/event-stream",
      "content-type: application/json",
      `mcp-session-id: ${transport.sessionId}`,
      `content-length: ${Buffer.byteLength(body)}`,
    ].join("\r\n");
    const unread = s.raw(head, body);
    unread.socket.pause();
    // The call has ended (every update was emitted) while nothing was read.
    await expect
      .poll(async () => (await (await fetch(`${s.url()}/metrics`)).text()).includes('tool="spam"'))
      .toBe(true);
    unread.socket.resume();
    await expect.poll(() => unread.received()).toContain(`spammed ${UPDATES}`);
    const progress = [
      ...unread
        .received()
        .matchAll(/"method":"notifications\/progress","params":\{"progressToken":"p","progress":(\d+)/g),
    ].map((m) => Number(m[1]));
    // Fewer than emitted: the rest were dropped, not queued; those sent are numbered 1, 2, 3, …
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.length).toBeLessThan(UPDATES);
    expect(progress).toEqual(progress.map((_, i) => i + 1));
  });
});
