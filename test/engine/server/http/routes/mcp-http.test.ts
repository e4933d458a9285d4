/**
 * MCP over streamable HTTP at `warden serve`'s /mcp, driven by the SDK's client: bearer auth, one
 * warden session per MCP session with the tenant's policy and quotas, progress notifications, and
 * the warden session closed when the MCP session ends.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import { WardenClient } from "../../../../../src/client/index.js";
import { describeEngine } from "../../../../helpers/engine.js";
import { type ServedTenants, serveTenants } from "../../../../helpers/serve-tenants.js";

const text = (r: unknown) =>
  (r as CallToolResult).content.map((c) => (c.type === "text" ? c.text : "")).join("");

describeEngine("MCP over HTTP in warden serve", () => {
  let served: ServedTenants;
  let auditDir: string;
  beforeAll(async () => {
    auditDir = await mkdtemp(join(tmpdir(), "warden-mcp-audit-"));
    served = await serveTenants(`test-mcphttp-${process.pid}`, { auditLog: join(auditDir, "audit.jsonl") });
  });
  afterAll(async () => {
    await served?.stop();
    await rm(auditDir, { recursive: true, force: true });
  });

  /** The audit log's lines so far, parsed. */
  async function auditLines(): Promise<Record<string, unknown>[]> {
    const text = await readFile(join(auditDir, "audit.jsonl"), "utf8");
    return text
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  }

  /** POSTs one JSON-RPC message by hand on MCP session `mcpSessionId`. */
  function rawPost(key: string, mcpSessionId: string, message: unknown): Promise<Response> {
    return fetch(`${served.url}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${key}`,
        "mcp-session-id": mcpSessionId,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify(message),
    });
  }

  function transport(key: string): StreamableHTTPClientTransport {
    return new StreamableHTTPClientTransport(new URL(`${served.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    });
  }

  /** An `initialize` POSTed by hand with `key` and the `accept` header given. */
  function rawInitialize(key: string, accept: string): Promise<Response> {
    return fetch(`${served.url}/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "raw", version: "1" },
        },
      }),
    });
  }

  it("lists tools, streams progress, and ends the warden session with the MCP session", async () => {
    const rest = new WardenClient({ baseUrl: served.url, apiKey: served.keys.main });
    const client = new Client({ name: "warden-test", version: "1" });
    const t = transport(served.keys.main);
    await client.connect(t);
    const { tools } = await client.listTools();
    expect(tools.map((x) => x.name)).toEqual(["read", "bash", "edit", "write", "grep", "find", "ls"]);
    const [session] = await rest.listSessions();
    expect(session?.workspaceMode).toBe("copy");

    const progress: string[] = [];
    const result = await client.callTool(
      { name: "bash", arguments: { command: "for i in 1 2 3; do echo h$i; sleep 0.4; done" } },
      undefined,
      { onprogress: (p) => progress.push(p.message ?? "") },
    );
    expect(text(result)).toBe("h1\nh2\nh3\n");
    expect(progress.some((m) => m.startsWith("h1"))).toBe(true);

    await t.terminateSession();
    await client.close();
    expect(await rest.listSessions()).toEqual([]);
  });

  it("an initialize the transport refuses (406: no text/event-stream in Accept) leaves no warden session", async () => {
    const rest = new WardenClient({ baseUrl: served.url, apiKey: served.keys.main });
    for (let i = 0; i < 3; i++) {
      const refused = await rawInitialize(served.keys.main, "application/json");
      expect(refused.status).toBe(406);
    }
    // The warden session goes with the refused transport (closed asynchronously by the manager).
    while ((await rest.listSessions()).length > 0) await new Promise((r) => setTimeout(r, 100));
    expect(await rest.listSessions()).toEqual([]);
  });

  it("applies the tenant's policy: a denied call is isError naming the rule", async () => {
    const client = new Client({ name: "warden-test", version: "1" });
    const t = transport(served.keys.policy);
    await client.connect(t);
    const refused = await client.callTool({ name: "bash", arguments: { command: "rm -rf /workspace/x" } });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toContain("is denied by rule 'deny-rm'");
    await t.terminateSession();
    await client.close();
  });

  it("refuses a missing key (401), another tenant's MCP session (404) and a tenant over maxSessions (429)", async () => {
    const anonymous = await fetch(`${served.url}/mcp`, { method: "POST", body: "{}" });
    expect(anonymous.status).toBe(401);

    const owner = new Client({ name: "warden-test", version: "1" });
    const ownerTransport = transport(served.keys.limited);
    await owner.connect(ownerTransport);
    const stolen = await fetch(`${served.url}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${served.keys.main}`,
        "mcp-session-id": ownerTransport.sessionId ?? "",
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(stolen.status).toBe(404);

    const second = new Client({ name: "warden-test", version: "1" });
    const error = await second.connect(transport(served.keys.limited)).catch((e: unknown) => e);
    expect(String(error)).toContain("maxSessions");
    const initialize = await rawInitialize(served.keys.limited, "application/json, text/event-stream");
    expect(initialize.status).toBe(429);
    expect(initialize.headers.get("retry-after")).toBe("1");

    await ownerTransport.terminateSession();
    await owner.close();
  });

  it("a REST DELETE of the warden session closes its MCP session: the client's next request is a 404", async () => {
    const rest = new WardenClient({ baseUrl: served.url, apiKey: served.keys.main });
    const client = new Client({ name: "warden-test", version: "1" });
    const t = transport(served.keys.main);
    await client.connect(t);
    const [session] = await rest.listSessions();
    if (!session) throw new Error("no warden session behind the MCP session");
    await rest.deleteSession(session.id);

    const error = await client.listTools().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StreamableHTTPError);
    expect((error as StreamableHTTPError).code).toBe(404);
    expect((error as Error).message).toContain(`No MCP session '${t.sessionId}'`);
    await client.close();
  });

  it("a REST DELETE ends the MCP session's open event stream, and a tools/call on it is a 404", async () => {
    const rest = new WardenClient({ baseUrl: served.url, apiKey: served.keys.main });
    const init = await rawInitialize(served.keys.main, "application/json, text/event-stream");
    expect(init.status).toBe(200);
    await init.body?.cancel();
    const mcpSessionId = init.headers.get("mcp-session-id") ?? "";
    const initialized = await rawPost(served.keys.main, mcpSessionId, {
      jsonrpc: "2.0",
      method: "notifications/initialized",
    });
    expect(initialized.status).toBe(202);
    const stream = await fetch(`${served.url}/mcp`, {
      headers: {
        authorization: `Bearer ${served.keys.main}`,
        "mcp-session-id": mcpSessionId,
        accept: "text/event-stream",
      },
    });
    expect(stream.status).toBe(200);
    const reader = stream.body?.getReader();
    if (!reader) throw new Error("no event stream body");
    const [session] = await rest.listSessions();
    if (!session) throw new Error("no warden session behind the MCP session");
    await rest.deleteSession(session.id);

    // The server's transport closed its stream: the reader reaches the end (before the fix it
    // stayed open, held by a transport nothing would ever close, until the test timed out).
    while (!(await reader.read()).done) {}
    const call = await rawPost(served.keys.main, mcpSessionId, {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "bash", arguments: { command: "echo late" } },
    });
    expect(call.status).toBe(404);
    expect(await call.json()).toEqual({
      code: "NOT_FOUND",
      message: `No MCP session '${mcpSessionId}': initialize a new one (POST /mcp without mcp-session-id).`,
    });
  });

  it("every audit line of an MCP session's requests and tool calls names its warden session and tenant", async () => {
    const rest = new WardenClient({ baseUrl: served.url, apiKey: served.keys.main });
    const before = (await auditLines()).length;
    const client = new Client({ name: "warden-test", version: "1" });
    const t = transport(served.keys.main);
    await client.connect(t);
    const [session] = await rest.listSessions();
    if (!session) throw new Error("no warden session behind the MCP session");
    const result = await client.callTool({ name: "bash", arguments: { command: "echo audited" } });
    expect(text(result)).toBe("audited\n");
    await t.terminateSession();
    await client.close();

    const ofMcp = async () =>
      (await auditLines())
        .slice(before)
        .filter((l) => (l.kind === "request" && l.route === "/mcp") || l.kind === "tool");
    // The DELETE's line is written when its answer is sent, the GET stream's when it ends.
    await expect
      .poll(async () => (await ofMcp()).filter((l) => l.method === "GET" || l.method === "DELETE").length)
      .toBe(2);
    const lines = await ofMcp();
    expect(lines.map((l) => `${l.kind} ${l.method ?? l.tool}`).sort()).toEqual([
      "request DELETE",
      "request GET",
      "request POST", // initialize
      "request POST", // notifications/initialized
      "request POST", // tools/call
      "tool bash",
    ]);
    const tenant = `test-mcphttp-${process.pid}-main`;
    for (const line of lines) expect([line.session, line.tenant]).toEqual([session.id, tenant]);
  });
});
