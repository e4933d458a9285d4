/**
 * An MCP tools/call at /mcp keeps its tenant's maxConcurrentToolCalls slot until its answer is
 * delivered (src/server/http/mcp-answer-slots.ts), as a REST batch does: a real listener over the fake
 * backend, the SDK's client for the calls that are read, and a raw POST whose answer (15 MiB, more
 * than the kernel's socket buffers take) is left unread. A call over the quota is an `isError`
 * result naming it. Also: a POST the SDK refuses takes no answer over, a batch's refused or
 * cancelled call does not hold its stall clock back, and shutdown does not wait on a GET stream.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import type { ServerConfig } from "../../../../src/server/config/index.js";
import { bufferedServer, MiB, type RawRequest } from "../../../helpers/buffered-server.js";
import { auth, type FakeBackend } from "../../../helpers/server-fakes.js";

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

/** A sleep's result. */
const slept = { content: [{ type: "text", text: "slept" }], isError: false };

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

  /** A raw POST of `messages` (one JSON-RPC message, or a batch) on MCP session `sessionId`. */
  function rawPost(sessionId: string, messages: unknown, accept = "application/json, text/event-stream") {
    const body = JSON.stringify(messages);
    const head = [
      "POST /mcp HTTP/1.1",
      "host: x",
      `authorization: ${auth("alpha").authorization}`,
      `accept: ${accept}`,
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

  /** A 15 MiB echo's tools/call. */
  const big = () => call("big", "echo", { text: "x".repeat(15 * MiB) });

  /** A POST of `messages` (default: a 15 MiB echo) on MCP session `sessionId`, read until an answer begins, then no more. */
  async function unreadAnswer(sessionId: string, messages: unknown = big()) {
    const unread = rawPost(sessionId, messages);
    // Paused once the answer has begun: the call has ended, its answer is being written.
    const onData = () => {
      if (!unread.received().includes("event: message")) return;
      unread.socket.pause();
      unread.socket.removeListener("data", onData);
    };
    unread.socket.on("data", onData);
    await expect.poll(() => unread.received()).toContain("event: message");
    expect(unread.received()).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    return unread;
  }

  const echo = (client: Client) => client.callTool({ name: "echo", arguments: { text: "hi" } });

  /**
   * Watches the sleep calls of the newest MCP session's sandbox: `started` lists each one's `ms` as
   * it starts running (its slot taken), and one of `heldMs` waits until `release(ms)` before it
   * sleeps: it ends when the test says, not when a sleep that a loaded host could outlast is over.
   */
  function watchSleeps(...heldMs: number[]) {
    const session = s.backend().sessions.at(-1) as FakeBackend["sessions"][number];
    const run = session.runToolCalls.bind(session);
    const started: number[] = [];
    const gates = new Map(
      heldMs.map((ms) => {
        let open!: () => void;
        return [ms, { opened: new Promise<void>((resolve) => (open = resolve)), open }];
      }),
    );
    session.runToolCalls = async (calls, options) => {
      for (const c of calls) {
        if (c.name !== "sleep") continue;
        const ms = (c.arguments as { ms: number }).ms;
        started.push(ms);
        await gates.get(ms)?.opened;
      }
      return run(calls, options);
    };
    return { started, release: (ms: number) => gates.get(ms)?.open() };
  }

  /** Waits until `unread`'s answer, stalled for httpRequestTimeoutMs, gives its slot back; then reads on. */
  async function cutOnceStalled(unread: RawRequest, client: Client) {
    await expect.poll(() => echo(client)).toEqual(echoed);
    // The server ended the stalled connection: read on, it ends before the whole answer.
    unread.socket.resume();
    await unread.closed;
    expect(unread.received().length).toBeLessThan(15 * MiB);
  }

  it("an unread answer keeps the slot (maxConcurrentToolCalls 1: the next call is refused) until the client leaves", async () => {
    await serve(1);
    const { client, sessionId } = await connect();
    const unread = await unreadAnswer(sessionId);
    expect(await echo(client)).toEqual(refused(1));
    unread.socket.destroy();
    await expect.poll(() => echo(client)).toEqual(echoed);
  });

  it("an unread answer gives its slot back once it stalls for httpRequestTimeoutMs", async () => {
    await serve(1, 1500);
    const { client, sessionId } = await connect();
    const unread = await unreadAnswer(sessionId);
    expect(await echo(client)).toEqual(refused(1));
    await cutOnceStalled(unread, client);
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
    await expect.poll(() => echo(client)).toEqual(refused(2));
    cancel.abort();
    expect(await sleeping).toBe("MCP error -32001: AbortError: This operation was aborted");
    await expect.poll(() => echo(client)).toEqual(echoed);
  });

  it("a JSON-RPC batch's answers keep their slots until its stream ends; the stall clock waits for its last answer", async () => {
    await serve(2, 300);
    const { client, sessionId } = await connect();
    const sleeps = watchSleeps(1500);
    const batch = rawPost(sessionId, [
      call("e", "echo", { text: "first" }),
      call("s", "sleep", { ms: 1500 }),
    ]);
    await expect.poll(() => batch.received()).toContain('"text":"first"');
    // The echo's answer is out, the stream is not: its slot and the sleep's are both held.
    expect(await echo(client)).toEqual(refused(2));
    // Silent for longer than httpRequestTimeoutMs (the sleep's 1500 ms; a loaded host only makes the
    // silence longer), the stream is not cut before the sleep's answer.
    sleeps.release(1500);
    await expect.poll(() => batch.received()).toContain('"text":"slept"');
    await expect.poll(() => echo(client)).toEqual(echoed);
  });

  it("a POST the SDK refuses (406) takes no call over: the batch's answer keeps the slot until its stream ends", async () => {
    await serve(2);
    const { client, sessionId } = await connect();
    const sleeps = watchSleeps(600, 3000);
    const batch = rawPost(sessionId, [call("s", "sleep", { ms: 600 }), call("t", "sleep", { ms: 3000 })]);
    await expect.poll(() => [...sleeps.started].sort((a, b) => a - b)).toEqual([600, 3000]);
    // The same id again, without `text/event-stream` in Accept: the SDK refuses it, "s" stays the batch's.
    const refusedPost = rawPost(sessionId, call("s", "sleep", { ms: 600 }), "application/json");
    await expect.poll(() => refusedPost.received().split("\r\n")[0]).toBe("HTTP/1.1 406 Not Acceptable");
    sleeps.release(600);
    await expect.poll(() => batch.received()).toContain('"text":"slept"');
    // "s" is answered on the batch's stream, which is not over while "t" runs: both slots are held.
    expect(await echo(client)).toEqual(refused(2));
    sleeps.release(3000);
    await expect.poll(() => echo(client)).toEqual(echoed);
  });

  it("a batch's call refused by the quota does not keep the stall clock from starting", async () => {
    await serve(1, 1500);
    const { client, sessionId } = await connect();
    const batch = await unreadAnswer(sessionId, [big(), call("r", "echo", { text: "r" })]);
    const refusal = `"text":"${refused(1).content[0]?.text}"`;
    await expect.poll(() => batch.received().includes(refusal)).toBe(true);
    expect(await echo(client)).toEqual(refused(1));
    await cutOnceStalled(batch, client);
  });

  it("a batch's cancelled call does not keep the stall clock from starting", async () => {
    await serve(2, 1500);
    const { client, sessionId } = await connect();
    const sleeps = watchSleeps();
    const batch = await unreadAnswer(sessionId, [big(), call("t", "sleep", { ms: 60_000 })]);
    expect(await echo(client)).toEqual(refused(2));
    const cancel = rawPost(sessionId, {
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: "t" },
    });
    await expect.poll(() => cancel.received().split("\r\n")[0]).toBe("HTTP/1.1 202 Accepted");
    // The cancelled call's slot goes to a sleep; the other comes back once the unread answer stalls.
    const stop = new AbortController();
    const holding = client
      .callTool({ name: "sleep", arguments: { ms: 60_000 } }, undefined, { signal: stop.signal })
      .catch((err: Error) => err.message);
    await expect.poll(() => sleeps.started).toEqual([60_000, 60_000]); // "t", then the sleep holding the slot
    await expect.poll(() => echo(client)).toEqual(echoed);
    stop.abort();
    expect(await holding).toBe("MCP error -32001: AbortError: This operation was aborted");
    // The server cut the stream (the SDK never ends it: "t" has no answer), before its last chunk.
    batch.socket.resume();
    await batch.closed;
    expect(batch.received().endsWith("\r\n0\r\n\r\n")).toBe(false);
  });

  it("shutdown ends an idle client's GET stream at once; a call running then still gets its answer", async () => {
    await serve(2);
    const { client } = await connect();
    const sleeps = watchSleeps();
    const sleeping = client.callTool({ name: "sleep", arguments: { ms: 1000 } });
    await expect.poll(() => sleeps.started).toEqual([1000]);
    // A grace past the test's timeout: had the idle GET stream held shutdown, the test would time out.
    await s.running().shutdown(600_000);
    expect(await sleeping).toEqual(slept);
  });
});
