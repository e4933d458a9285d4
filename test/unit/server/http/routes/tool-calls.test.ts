import { mkdtemp, rm } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type AuditEntry, createMemoryAuditLog } from "../../../../../src/server/audit.js";
import { MAX_ARGUMENT_DEPTH } from "../../../../../src/server/http/call-arguments.js";
import { resultJsonPool } from "../../../../../src/server/http/result-json.js";
import { MAX_TOOL_CALL_ID_CHARS, MAX_TOOL_NAME_CHARS } from "../../../../../src/server/http/schemas.js";
import { type RunningServer, startServer } from "../../../../../src/server/server.js";
import { auth, FakeBackend, serverParts, tenant, testConfig } from "../../../../helpers/server-fakes.js";

/** Parses an SSE body into [event, data] pairs. */
function parseSse(body: string): [string, unknown][] {
  return body
    .split("\n\n")
    .filter(Boolean)
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1] ?? "";
      const data = /^data: (.*)$/m.exec(block)?.[1] ?? "null";
      return [event, JSON.parse(data)];
    });
}

describe("warden serve: tool calls", () => {
  let dir: string;
  let server: RunningServer;
  let backend: FakeBackend;
  let audit: ReturnType<typeof createMemoryAuditLog>;
  let sid: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "warden-calls-"));
    backend = new FakeBackend();
    audit = createMemoryAuditLog();
    const config = testConfig(dir, [
      tenant("alpha", { quotas: { ...tenant("alpha").quotas, maxConcurrentToolCalls: 2 } }),
      tenant("beta"),
    ]);
    server = await startServer({ config, ...serverParts(backend), audit, listen: true });
    const res = await server.app.inject({
      method: "POST",
      url: "/v1/sessions",
      headers: auth("alpha"),
      payload: {},
    });
    sid = res.json().id;
  });

  afterEach(async () => {
    await server.shutdown(0);
    await rm(dir, { recursive: true, force: true });
  });

  const calls = (...list: [string, string, unknown][]) => ({
    toolCalls: list.map(([id, name, args]) => ({ id, name, arguments: args })),
  });

  it("returns the results in call order, and audits each call", async () => {
    const res = await server.app.inject({
      method: "POST",
      url: `/v1/sessions/${sid}/tool-calls`,
      headers: auth("alpha"),
      payload: calls(["c1", "sleep", { ms: 50 }], ["c2", "echo", { text: "hi" }]),
    });
    expect(res.statusCode).toBe(200);
    const { results } = res.json();
    expect(results.map((r: { toolCallId: string }) => r.toolCallId)).toEqual(["c1", "c2"]);
    expect(results[1]).toEqual({
      role: "toolResult",
      toolCallId: "c2",
      toolName: "echo",
      content: [{ type: "text", text: "hi" }],
      details: { exitCode: 0 },
      isError: false,
      timestamp: 1,
    });
    const tools = audit.entries.filter((e): e is Extract<AuditEntry, { kind: "tool" }> => e.kind === "tool");
    expect(tools.map((t) => [t.toolCallId, t.tool, t.decision, t.decider, t.bytes, t.exitCode])).toEqual([
      ["c2", "echo", "run", "none", 2, 0],
      ["c1", "sleep", "run", "none", 5, undefined],
    ]);
    expect(tools[0]).toMatchObject({ tenant: "alpha", session: sid, isError: false });
    const requests = audit.entries.filter((e) => e.kind === "request");
    expect(requests.at(-1)).toMatchObject({
      kind: "request",
      tenant: "alpha",
      key: "alpha-key",
      session: sid,
      method: "POST",
      route: "/v1/sessions/:id/tool-calls",
      status: 200,
    });
    const metrics = await server.app.inject({ method: "GET", url: "/metrics" });
    expect(metrics.body).toContain('warden_tool_calls_total{tenant="alpha",tool="echo",outcome="ok"} 1');
    expect(metrics.body).toContain('warden_sessions{tenant="alpha"} 1');
  });

  it("answers a large result with the same JSON, serialised in the worker pool (issue 11)", async () => {
    const config = { ...testConfig(join(dir, "big"), [tenant("alpha")]), jsonBodyLimitBytes: 1024 * 1024 };
    const big = await startServer({ config, ...serverParts(), audit: createMemoryAuditLog() });
    const run = vi.spyOn(resultJsonPool(), "run");
    try {
      const id = (
        await big.app.inject({ method: "POST", url: "/v1/sessions", headers: auth("alpha"), payload: {} })
      ).json().id;
      const text = "a line of output\n".repeat(8000);
      const res = await big.app.inject({
        method: "POST",
        url: `/v1/sessions/${id}/tool-calls`,
        headers: auth("alpha"),
        payload: calls(["c1", "echo", { text }]),
      });
      expect(res.statusCode).toBe(200);
      expect(res.headers["content-type"]).toBe("application/json; charset=utf-8");
      expect(res.json().results).toEqual([
        {
          role: "toolResult",
          toolCallId: "c1",
          toolName: "echo",
          content: [{ type: "text", text }],
          details: { exitCode: 0 },
          isError: false,
          timestamp: 1,
        },
      ]);
      expect(run).toHaveBeenCalledTimes(1);
    } finally {
      run.mockRestore();
      await big.shutdown(0);
    }
  });

  it("streams start/update/end events then the results with Accept: text/event-stream", async () => {
    const res = await server.app.inject({
      method: "POST",
      url: `/v1/sessions/${sid}/tool-calls`,
      headers: { ...auth("alpha"), accept: "text/event-stream" },
      payload: calls(["c1", "spam", { count: 2, bytes: 1 }]),
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toBe("text/event-stream; charset=utf-8");
    const events = parseSse(res.body);
    expect(events.map(([e]) => e)).toEqual([
      "tool_execution_start",
      "tool_execution_update",
      "tool_execution_update",
      "tool_execution_end",
      "results",
    ]);
    expect(events[1]![1]).toMatchObject({
      toolCallId: "c1",
      partial: { content: [{ type: "text", text: "0:x" }] },
    });
    expect((events[4]![1] as { results: { content: unknown }[] }).results[0]!.content).toEqual([
      { type: "text", text: "spammed 2" },
    ]);
    // The request's audit line counts the stream's bytes (it said 0: the socket's count was read
    // after the response ended).
    // One line per request: the app's own hook writes none for the stream.
    const lines = audit.entries.filter(
      (e) => e.kind === "request" && e.route === "/v1/sessions/:id/tool-calls",
    );
    expect(lines).toEqual([expect.objectContaining({ status: 200, bytes: Buffer.byteLength(res.body) })]);
    expect(Buffer.byteLength(res.body)).toBeGreaterThan(0);
  });

  for (const accept of ["application/json", "text/event-stream"]) {
    it(`a batch whose tool-call ids repeat is a 400 naming the id; no call runs (${accept})`, async () => {
      const res = await server.app.inject({
        method: "POST",
        url: `/v1/sessions/${sid}/tool-calls`,
        headers: { ...auth("alpha"), accept },
        payload: calls(
          ["c1", "sleep", { ms: 1 }],
          ["c2", "echo", { text: "x" }],
          ["c1", "echo", { text: "y" }],
        ),
      });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({
        code: "INVALID_ARGUMENT",
        message:
          "Tool call id 'c1' appears more than once in this batch; every call of a batch needs its own id. " +
          "No call of the batch was run: re-issue the calls with distinct ids.",
      });
      expect(backend.log).toEqual([]);
      expect(audit.entries.filter((e) => e.kind === "tool")).toEqual([]);
      expect(audit.entries.filter((e) => e.kind === "request").at(-1)).toMatchObject({ status: 400 });
    });
  }

  it("an id over 256 characters or a name over 128 is a 400 naming the field; nothing runs or is audited", async () => {
    const post = (id: string, name: string) =>
      server.app.inject({
        method: "POST",
        url: `/v1/sessions/${sid}/tool-calls`,
        headers: auth("alpha"),
        payload: calls([id, name, { text: "x" }]),
      });
    const longId = await post("i".repeat(MAX_TOOL_CALL_ID_CHARS + 1), "echo");
    expect(longId.statusCode).toBe(400);
    expect(longId.json()).toEqual({
      code: "INVALID_ARGUMENT",
      message: "body/toolCalls/0/id must NOT have more than 256 characters",
    });
    const longName = await post("c1", "n".repeat(MAX_TOOL_NAME_CHARS + 1));
    expect(longName.statusCode).toBe(400);
    expect(longName.json().message).toBe("body/toolCalls/0/name must NOT have more than 128 characters");
    expect(audit.entries.filter((e) => e.kind === "tool")).toEqual([]);
    const atLimit = await post("i".repeat(MAX_TOOL_CALL_ID_CHARS), "echo");
    expect(atLimit.statusCode).toBe(200);
    expect(audit.entries.filter((e) => e.kind === "tool").map((e) => e.toolCallId)).toEqual([
      "i".repeat(256),
    ]);
  });

  for (const accept of ["application/json", "text/event-stream"]) {
    it(`arguments nested deeper than 64 levels are a 400 naming the call; no call runs (${accept})`, async () => {
      // The body as text: JSON.stringify of 30,000 levels (100,000 overflowed the server's) would overflow here.
      const post = (arrays: number) =>
        server.app.inject({
          method: "POST",
          url: `/v1/sessions/${sid}/tool-calls`,
          headers: { ...auth("alpha"), accept, "content-type": "application/json" },
          payload:
            '{"toolCalls":[{"id":"c1","name":"echo","arguments":{"text":"a"}},' +
            `{"id":"c2","name":"echo","arguments":{"text":"b","x":${"[".repeat(arrays)}1${"]".repeat(arrays)}}}]}`,
        });
      // The arguments object is level 1: x in 64 arrays reaches level 65, one over.
      for (const arrays of [30_000, MAX_ARGUMENT_DEPTH]) {
        const res = await post(arrays);
        expect(res.statusCode).toBe(400);
        expect(res.json()).toEqual({
          code: "INVALID_ARGUMENT",
          message:
            "Tool call 'c2' has arguments nested deeper than 64 levels; no call of the batch was run: send flatter arguments.",
        });
      }
      expect(audit.entries.filter((e) => e.kind === "tool")).toEqual([]);
      expect((await post(MAX_ARGUMENT_DEPTH - 1)).statusCode).toBe(200);
    });
  }

  it("over maxConcurrentToolCalls is a 429 with Retry-After; other tenants are unaffected", async () => {
    // The two running calls wait for the test, not for a sleep a loaded host could outlast.
    const session = backend.sessions.at(-1) as (typeof backend.sessions)[number];
    const run = session.runToolCalls.bind(session);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    session.runToolCalls = async (toolCalls, options) => {
      await released;
      return run(toolCalls, options);
    };
    const running = server.app.inject({
      method: "POST",
      url: `/v1/sessions/${sid}/tool-calls`,
      headers: auth("alpha"),
      payload: calls(["c1", "sleep", { ms: 300 }], ["c2", "sleep", { ms: 300 }]),
    });
    await expect.poll(() => server.ctx.quotas.callsInFlight("alpha")).toBe(2);
    for (const accept of ["application/json", "text/event-stream"]) {
      const refused = await server.app.inject({
        method: "POST",
        url: `/v1/sessions/${sid}/tool-calls`,
        headers: { ...auth("alpha"), accept },
        payload: calls(["c3", "echo", { text: "x" }]),
      });
      expect(refused.statusCode).toBe(429);
      expect(refused.headers["retry-after"]).toBe("1");
      expect(refused.json()).toEqual({
        code: "RATE_LIMITED",
        message:
          "Tenant 'alpha' would have 3 tool calls running, over its maxConcurrentToolCalls 2; retry after the running calls finish.",
      });
    }
    const beta = (
      await server.app.inject({ method: "POST", url: "/v1/sessions", headers: auth("beta"), payload: {} })
    ).json().id;
    const ok = await server.app.inject({
      method: "POST",
      url: `/v1/sessions/${beta}/tool-calls`,
      headers: auth("beta"),
      payload: calls(["b1", "echo", { text: "x" }]),
    });
    expect(ok.statusCode).toBe(200);
    release();
    expect((await running).statusCode).toBe(200);
  });

  for (const accept of ["application/json", "text/event-stream"]) {
    it(`a client that disconnects aborts its calls (${accept})`, async () => {
      const body = JSON.stringify(calls(["slow", "sleep", { ms: 30_000 }]));
      const req = httpRequest(`${server.url}/v1/sessions/${sid}/tool-calls`, {
        method: "POST",
        headers: {
          ...auth("alpha"),
          accept,
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
        },
      });
      req.on("error", () => {});
      req.end(body);
      await expect.poll(() => server.ctx.registry.runningBatches()).toBe(1);
      req.destroy();
      await expect.poll(() => backend.log).toEqual(["slow:aborted"]);
      await expect.poll(() => server.ctx.registry.runningBatches()).toBe(0);
      expect(server.ctx.quotas.callsInFlight("alpha")).toBe(0);
    });
  }

  it("shutdown lets a running batch finish within the grace period, then closes the backend", async () => {
    const running = server.app.inject({
      method: "POST",
      url: `/v1/sessions/${sid}/tool-calls`,
      headers: auth("alpha"),
      payload: calls(["c1", "sleep", { ms: 200 }]),
    });
    await expect.poll(() => server.ctx.registry.runningBatches()).toBe(1);
    await server.shutdown(5000);
    expect((await running).json().results[0].content[0].text).toBe("slept");
    expect(backend.log).toEqual(["c1:done"]);
    // Then the backend is closed (the warm pool drained), once however often shutdown is called.
    await server.shutdown(5000);
    expect(backend.closes).toBe(1);
  });

  it("shutdown aborts a batch still running when the grace period ends", async () => {
    const running = server.app.inject({
      method: "POST",
      url: `/v1/sessions/${sid}/tool-calls`,
      headers: auth("alpha"),
      payload: calls(["c1", "sleep", { ms: 30_000 }]),
    });
    await expect.poll(() => server.ctx.registry.runningBatches()).toBe(1);
    // The sleep (30 s) would end on its own, unaborted: the result shows the grace period ended it.
    await server.shutdown(200);
    expect((await running).json().results[0]).toMatchObject({
      isError: true,
      content: [{ text: "Operation aborted" }],
    });
  });
});
