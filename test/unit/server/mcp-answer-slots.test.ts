/**
 * An MCP tools/call at /mcp keeps its tenant's maxConcurrentToolCalls slot until its answer is
 * delivered (src/server/mcp-answer-slots.ts), as a REST batch does: a real listener over the fake
 * backend, the SDK's client for the calls that are read, and a raw POST whose answer (15 MiB, more
 * than the kernel's socket buffers take) is left unread. A call over the quota is an `isError`
 * result naming it.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import type { ServerConfig } from "../../../src/server/config.js";
import { bufferedServer, MiB } from "../../helpers/buffered-server.js";
import { auth } from "../../helpers/server-fakes.js";

/** The result an MCP client gets for a call over alpha's maxConcurrentToolCalls `max`. */
const refused = (max: number) => ({
  content: [
    {
      type: "text",
      text:
        `RATE_LIMITED: Tenant 'alpha' would have ${max + 1} tool calls running, over its ` +
        `maxConcurrentToolCalls ${max}; retry after the running calls finish.`,
    },
  ],
  isError: true,
  _meta: { "io.warden/details": { code: "RATE_LIMITED", retryAfterSeconds: 1 } },
});

/** A read echo's result. */
const echoed = {
  content: [{ type: "text", text: "hi" }],
  isError: false,
  _meta: { "io.warden/details": { exitCode: 0 } },
};

describe("warden serve: an MCP tools/call answer holds its slot until it is delivered", () => {
  const s = bufferedServer();
  const clients: Client[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close();
    await s.stop();
  });

  /** Serves alpha with maxConcurrentToolCalls `max`, bodies up to 16 MiB and the stall timeout given. */
  async function serve(max: number, stallMs = 120_000): Promise<void> {
    await s.serve(64 * MiB, (c: ServerConfig) => {
      c.jsonBodyLimitBytes = 16 * MiB;
      c.httpRequestTimeoutMs = stallMs;
      for (const t of c.tenants) t.quotas = { ...t.quotas, maxConcurrentToolCalls: max };
    });
  }

  /** An MCP session of alpha through the SDK's client; its id for the raw requests. */
  async function connect(): Promise<{ client: Client; sessionId: string }> {
    const client = new Client({ name: "warden-test", version: "1" });
    const transport = new StreamableHTTPClientTransport(new URL(`${s.url()}/mcp`), {
      requestInit: { headers: auth("alpha") },
    });
    await client.connect(transport);
    clients.push(client);
    return { client, sessionId: transport.sessionId as string };
  }

  /** A raw POST of `messages` (one tools/call, or a JSON-RPC batch) on MCP session `sessionId`. */
  function rawPost(sessionId: string, messages: unknown) {
    const body = JSON.stringify(messages);
    const head = [
      "POST /mcp HTTP/1.1",
      "host: x",
      `authorization: ${auth("alpha").authorization}`,
      "accept: application/json, text/event-stream",
      "content-type: application/json",
      `mcp-session-id: ${sessionId}`,
      `content-length: ${Buffer.byteLength(body)}`,
    ].join("\r\n");
    return s.raw(head, body);
  }

  /** The JSON-RPC tools/call `id` of tool `name`. */
  const call = (id: string, name: string, args: object) => ({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name, arguments: args },
  });

  /** A tools/call of a 15 MiB echo on MCP session `sessionId`, read until its answer begins, then no more. */
  async function unreadAnswer(sessionId: string) {
    const unread = rawPost(sessionId, call("big", "echo", { text: "x".repeat(15 * MiB) }));
    // Paused once the answer has begun: the call has ended, its answer is being written.
    const onData = () => {
      if (!unread.received().includes("event: message")) return;
      unread.socket.pause();
      unread.socket.removeListener("data", onData);
    };
    unread.socket.on("data", onData);
    await expect.poll(() => unread.received(), { timeout: 5000 }).toContain("event: message");
    expect(unread.received()).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    return unread;
  }

  const echo = (client: Client) => client.callTool({ name: "echo", arguments: { text: "hi" } });

  it("an unread answer keeps the slot (maxConcurrentToolCalls 1: the next call is refused) until the client leaves", async () => {
    await serve(1);
    const { client, sessionId } = await connect();
    const unread = await unreadAnswer(sessionId);
    expect(await echo(client)).toEqual(refused(1));
    unread.socket.destroy();
    await expect.poll(() => echo(client), { timeout: 5000 }).toEqual(echoed);
  });

  it("an unread answer gives its slot back once it stalls for httpRequestTimeoutMs", async () => {
    await serve(1, 1500);
    const { client, sessionId } = await connect();
    const unread = await unreadAnswer(sessionId);
    expect(await echo(client)).toEqual(refused(1));
    await expect.poll(() => echo(client), { timeout: 5000 }).toEqual(echoed);
    // The server ended the stalled connection: read on, it ends before the whole answer.
    unread.socket.resume();
    await unread.closed;
    expect(unread.received().length).toBeLessThan(15 * MiB);
  });

  it("a cancelled call gives its slot back though its stream stays open; the unread answer keeps its own", async () => {
    await serve(2);
    const { client, sessionId } = await connect();
    await unreadAnswer(sessionId);
    const cancel = new AbortController();
    const sleeping = client
      .callTool({ name: "sleep", arguments: { ms: 60_000 } }, undefined, { signal: cancel.signal })
      .catch((err: Error) => err.message);
    // The sleep holds the second slot: the unread answer still holds the first.
    await expect.poll(() => echo(client), { timeout: 5000 }).toEqual(refused(2));
    cancel.abort();
    expect(await sleeping).toBe("MCP error -32001: AbortError: This operation was aborted");
    await expect.poll(() => echo(client), { timeout: 5000 }).toEqual(echoed);
  });

  it("a JSON-RPC batch's answers keep their slots until its stream ends; the stall clock waits for its last answer", async () => {
    await serve(2, 300);
    const { client, sessionId } = await connect();
    const batch = rawPost(sessionId, [
      call("e", "echo", { text: "first" }),
      call("s", "sleep", { ms: 1500 }),
    ]);
    await expect.poll(() => batch.received(), { timeout: 5000 }).toContain('"text":"first"');
    // The echo's answer is out, the stream is not: its slot and the sleep's are both held.
    expect(await echo(client)).toEqual(refused(2));
    // Silent for longer than httpRequestTimeoutMs, the stream is not cut before the sleep's answer.
    await expect.poll(() => batch.received(), { timeout: 5000 }).toContain('"text":"slept"');
    await expect.poll(() => echo(client), { timeout: 5000 }).toEqual(echoed);
  });
});
