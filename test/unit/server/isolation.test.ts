import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMemoryAuditLog } from "../../../src/server/audit.js";
import { type RunningServer, startServer } from "../../../src/server/server.js";
import { auth, FakeBackend, serverParts, testConfig } from "../../helpers/server-fakes.js";

describe("warden serve: tenant isolation (every route)", () => {
  let dir: string;
  let server: RunningServer;
  let backend: FakeBackend;
  let alphaSession: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "warden-iso-"));
    backend = new FakeBackend();
    server = await startServer({
      config: testConfig(dir),
      ...serverParts(backend),
      audit: createMemoryAuditLog(),
      listen: false,
    });
    const res = await server.app.inject({
      method: "POST",
      url: "/v1/sessions",
      headers: auth("alpha"),
      payload: {},
    });
    expect(res.statusCode).toBe(201);
    alphaSession = res.json().id;
  });

  afterEach(async () => {
    await server.shutdown(0);
    await rm(dir, { recursive: true, force: true });
  });

  const notFound = (id: string) => ({
    code: "NOT_FOUND",
    message: `Session '${id}' not found. List your sessions with GET /v1/sessions.`,
  });

  const routes: {
    name: string;
    method: "GET" | "POST" | "DELETE";
    url: (id: string) => string;
    payload?: object;
  }[] = [
    { name: "GET session", method: "GET", url: (id) => `/v1/sessions/${id}` },
    { name: "DELETE session", method: "DELETE", url: (id) => `/v1/sessions/${id}` },
    {
      name: "POST tool-calls",
      method: "POST",
      url: (id) => `/v1/sessions/${id}/tool-calls`,
      payload: { toolCalls: [{ id: "c1", name: "echo", arguments: { text: "hi" } }] },
    },
    { name: "GET workspace", method: "GET", url: (id) => `/v1/sessions/${id}/workspace` },
    { name: "GET changes", method: "GET", url: (id) => `/v1/sessions/${id}/changes` },
    { name: "GET tools", method: "GET", url: (id) => `/v1/tools?session=${id}` },
  ];

  for (const route of routes) {
    it(`${route.name}: another tenant's session is a 404 identical to an unknown id`, async () => {
      const res = await server.app.inject({
        method: route.method,
        url: route.url(alphaSession),
        headers: auth("beta"),
        ...(route.payload ? { payload: route.payload } : {}),
      });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual(notFound(alphaSession));
      const unknown = await server.app.inject({
        method: route.method,
        url: route.url("no-such-session"),
        headers: auth("beta"),
        ...(route.payload ? { payload: route.payload } : {}),
      });
      expect(unknown.statusCode).toBe(404);
      expect(unknown.json()).toEqual(notFound("no-such-session"));
      // The owner still has it, untouched, and no call ran.
      const own = await server.app.inject({
        method: "GET",
        url: `/v1/sessions/${alphaSession}`,
        headers: auth("alpha"),
      });
      expect(own.statusCode).toBe(200);
      expect(backend.sessions[0]!.closed).toBe(false);
    });
  }

  it("SSE tool-calls: another tenant's session is a plain JSON 404, not a stream", async () => {
    const res = await server.app.inject({
      method: "POST",
      url: `/v1/sessions/${alphaSession}/tool-calls`,
      headers: { ...auth("beta"), accept: "text/event-stream" },
      payload: { toolCalls: [{ id: "c1", name: "echo", arguments: { text: "hi" } }] },
    });
    expect(res.statusCode).toBe(404);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    expect(res.json()).toEqual(notFound(alphaSession));
  });

  it("GET /v1/sessions lists only the caller's sessions", async () => {
    const beta = await server.app.inject({ method: "GET", url: "/v1/sessions", headers: auth("beta") });
    expect(beta.json()).toEqual({ sessions: [] });
    const alpha = await server.app.inject({ method: "GET", url: "/v1/sessions", headers: auth("alpha") });
    expect(alpha.json().sessions.map((s: { id: string }) => s.id)).toEqual([alphaSession]);
  });

  it("approvals: another tenant can neither list nor answer an ask (404)", async () => {
    const pending = server.ctx.approvals.provider.request({
      tool: "bash",
      args: { command: "rm -rf /" },
      decision: { decision: "ask", ruleId: "ask-rm", part: "rm -rf /", trail: [] },
      signal: new AbortController().signal,
      sessionId: alphaSession,
      tenant: "alpha",
    });
    const [ask] = server.ctx.approvals.list("alpha");
    const listed = await server.app.inject({ method: "GET", url: "/v1/approvals", headers: auth("alpha") });
    expect(listed.json().approvals).toEqual([
      {
        id: ask!.id,
        sessionId: alphaSession,
        tool: "bash",
        args: { command: "rm -rf /" },
        decision: "ask",
        rule: "ask-rm",
        part: "rm -rf /",
        createdAt: ask!.createdAt,
      },
    ]);
    const list = await server.app.inject({ method: "GET", url: "/v1/approvals", headers: auth("beta") });
    expect(list.json()).toEqual({ approvals: [] });
    const answer = await server.app.inject({
      method: "POST",
      url: `/v1/approvals/${ask!.id}`,
      headers: auth("beta"),
      payload: { decision: "allow" },
    });
    expect(answer.statusCode).toBe(404);
    expect(answer.json()).toEqual({
      code: "NOT_FOUND",
      message: `Approval '${ask!.id}' not found. List pending approvals with GET /v1/approvals.`,
    });
    const bad = await server.app.inject({
      method: "POST",
      url: `/v1/approvals/${ask!.id}`,
      headers: auth("alpha"),
      payload: { decision: "yes" },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({
      code: "INVALID_ARGUMENT",
      message: 'decision must be one of allow, allow-once, allow-session, deny; got "yes".',
    });
    const own = await server.app.inject({
      method: "POST",
      url: `/v1/approvals/${ask!.id}`,
      headers: auth("alpha"),
      payload: { decision: "deny" },
    });
    expect(own.json()).toEqual({ id: ask!.id, decision: "deny" });
    await expect(pending).resolves.toBe("deny");
  });

  it("every /v1 route without a valid key is a 401", async () => {
    for (const route of routes) {
      const res = await server.app.inject({
        method: route.method,
        url: route.url(alphaSession),
        headers: { authorization: "Bearer wrong" },
      });
      expect(res.statusCode).toBe(401);
      expect(res.json().code).toBe("UNAUTHORIZED");
    }
    const none = await server.app.inject({ method: "GET", url: "/v1/sessions" });
    expect(none.statusCode).toBe(401);
  });
});
