/**
 * `warden mcp` over stdio, driven by the SDK's own MCP client: the README's server example (default
 * policy on examples/workspace), streaming progress, elicitation for `ask`, the opt-in process tool,
 * and that disconnects and signals leave no container.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { type CallToolResult, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import Docker from "dockerode";
import { afterEach, expect, it } from "vitest";
import { mcpToolsOf } from "../../../src/mcp/index.js";
import { buildProviderTools } from "../../../src/pipeline/index.js";
import { builtinTools } from "../../../src/tools/index.js";
import { describeEngine } from "../../helpers/engine.js";
import {
  containersLeft,
  EXAMPLE_CWD,
  readmeServerExample,
  tenantContainers,
  testTenant,
} from "../../helpers/mcp-fixture.js";

const open: Client[] = [];
afterEach(async () => {
  for (const client of open.splice(0)) await client.close().catch(() => undefined);
});

interface ConnectOptions {
  extra?: string[];
  elicit?: (message: string) => Record<string, unknown>;
  /** Replace the example's `--policy` with `--policy allow-all` (its default policy asks for `sleep`). */
  noPolicy?: boolean;
}

/** Starts the README's example (plus `extra` args) and connects the SDK client to it. */
async function connect(tenant: string, options: ConnectOptions = {}): Promise<{ client: Client }> {
  const example = readmeServerExample();
  const args = options.noPolicy
    ? [
        ...example.args.filter((a, i, all) => a !== "--policy" && all[i - 1] !== "--policy"),
        "--policy",
        "allow-all",
      ]
    : example.args;
  const transport = new StdioClientTransport({
    command: example.command,
    args: [...args, "--tenant", tenant, ...(options.extra ?? [])],
    cwd: EXAMPLE_CWD,
    stderr: "ignore",
  });
  const client = new Client(
    { name: "warden-test", version: "1" },
    { capabilities: options.elicit ? { elicitation: {} } : {} },
  );
  if (options.elicit) {
    const elicit = options.elicit;
    client.setRequestHandler(ElicitRequestSchema, async (request) => ({
      action: "accept",
      content: elicit(request.params.message),
    }));
  }
  await client.connect(transport);
  open.push(client);
  return { client };
}

function text(result: unknown): string {
  return (result as CallToolResult).content.map((c) => (c.type === "text" ? c.text : "")).join("");
}

describeEngine("warden mcp over stdio (SDK client)", () => {
  it("lists the session's tools with providerTools' names, descriptions and schemas", async () => {
    const { client } = await connect(testTenant("list"), { extra: ["--tools", "read,ls,bash"] });
    const { tools } = await client.listTools();
    const expected = mcpToolsOf({
      providerTools: () =>
        buildProviderTools(builtinTools().filter((t) => ["read", "ls", "bash"].includes(t.name))),
    });
    expect(tools).toEqual(expected);
    expect(tools.map((t) => t.name)).toEqual(["read", "bash", "ls"]);
  });

  it("runs the README example: read a workspace file, refuse rm by rule, refuse ask without elicitation", async () => {
    const { client } = await connect(testTenant("readme"));
    const read = await client.callTool({ name: "read", arguments: { path: "src/greet.py", limit: 1 } });
    expect(read.isError).toBe(false);
    expect(text(read)).toContain("def ");

    const rm = await client.callTool({ name: "bash", arguments: { command: "rm -rf src" } });
    expect(rm.isError).toBe(true);
    expect(text(rm)).toBe(
      "Tool call refused: bash part 'rm -rf src' is denied by rule 'deny-rm' (operator policy): deleting files with rm is not allowed; use the edit or write tools, or ask the user. Nothing was run.",
    );

    const ask = await client.callTool({ name: "bash", arguments: { command: "hostname" } });
    expect(ask.isError).toBe(true);
    expect(text(ask)).toBe(
      "Tool call refused: bash part 'hostname' needs approval (rule 'default' (operator policy)) and the MCP client does not support elicitation (allow the call in the policy, or use an MCP client that supports elicitation), so it is denied. Nothing was run.",
    );
  });

  it("asks through elicitation: an accepted allow-once runs the call, a deny refuses it", async () => {
    const messages: string[] = [];
    let answer = "allow-once";
    const { client } = await connect(testTenant("elicit"), {
      elicit: (message) => {
        messages.push(message);
        return { decision: answer };
      },
    });
    const allowed = await client.callTool({
      name: "bash",
      arguments: { command: "hostname >/dev/null; echo approved" },
    });
    expect(allowed.isError).toBe(false);
    expect(text(allowed)).toBe("approved\n");
    expect(messages[0]).toContain("Tool call needs approval: bash");
    answer = "deny";
    const denied = await client.callTool({
      name: "bash",
      arguments: { command: "hostname >/dev/null; echo again" },
    });
    expect(denied.isError).toBe(true);
    expect(text(denied)).toContain(
      "needs approval (rule 'default' (operator policy)) and the approver denied it",
    );
  });

  it("streams bash output as progress notifications", async () => {
    const { client } = await connect(testTenant("progress"), { noPolicy: true });
    const progress: string[] = [];
    const result = await client.callTool(
      { name: "bash", arguments: { command: "for i in 1 2 3; do echo line$i; sleep 0.5; done" } },
      undefined,
      { onprogress: (p) => progress.push(p.message ?? "") },
    );
    expect(text(result)).toBe("line1\nline2\nline3\n");
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.some((m) => m.startsWith("line1"))).toBe(true);
  });

  it("serves the opt-in process tool when --tools names it: a background start, then its output", async () => {
    const { client } = await connect(testTenant("process"), {
      noPolicy: true,
      extra: ["--tools", "bash,process"],
    });
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["bash", "process"]);
    const started = await client.callTool({
      name: "process",
      arguments: { action: "start", command: "echo from-the-background" },
    });
    expect([started.isError ?? false, text(started)]).toEqual([false, expect.stringContaining("p1")]);
    const waited = await client.callTool({
      name: "process",
      arguments: { action: "wait", id: "p1", timeout: 20 },
    });
    expect(waited.isError ?? false).toBe(false);
    const output = await client.callTool({
      name: "process",
      arguments: { action: "output", id: "p1", offset: 0 },
    });
    expect(text(output)).toContain("from-the-background");
  });

  it("a client disconnect during a running call leaves no container", async () => {
    const tenant = testTenant("disconnect");
    const { client } = await connect(tenant, { noPolicy: true });
    expect(await tenantContainers(tenant)).toHaveLength(1);
    let started: () => void = () => undefined;
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    const call = client
      .callTool({ name: "bash", arguments: { command: "echo started; sleep 60" } }, undefined, {
        onprogress: () => started(),
      })
      .catch((err: unknown) => err);
    await running;
    await client.close();
    expect(await call).toBeInstanceOf(Error);
    expect(await containersLeft(tenant)).toEqual([]);
  });

  it("a client that dies (its pipes, stderr included, closed at once) leaves no container", async () => {
    // MCP clients pipe the server's stderr; when the client dies, the server's own "closing" line
    // hits a closed pipe (EPIPE). That must not kill it before the sandbox is removed.
    const tenant = testTenant("client-dies");
    const example = readmeServerExample();
    const child = spawn(example.command, [...example.args, "--tenant", tenant], {
      cwd: EXAMPLE_CWD,
      stdio: ["pipe", "pipe", "pipe"],
    });
    try {
      const ready = new Promise<void>((resolve) => {
        child.stderr.on("data", (chunk: Buffer) => {
          if (chunk.toString().includes(" ready, tools: ")) resolve();
        });
      });
      const initialize = {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      };
      child.stdin.write(`${JSON.stringify(initialize)}\n`);
      await Promise.all([once(child.stdout, "data"), ready]);
      expect(await tenantContainers(tenant)).toHaveLength(1);
      const exited = once(child, "exit");
      child.stdout.destroy();
      child.stderr.destroy();
      child.stdin.destroy();
      const [code] = await exited;
      expect({ code, left: await containersLeft(tenant) }).toEqual({ code: 0, left: [] });
    } finally {
      child.kill("SIGKILL");
      const docker = new Docker();
      for (const id of await tenantContainers(tenant))
        await docker.getContainer(id).remove({ force: true, v: true });
    }
  });

  it.each(["SIGTERM", "SIGHUP"] as const)("%s closes the session and leaves no container", async (name) => {
    const tenant = testTenant(name.toLowerCase());
    const { client } = await connect(tenant);
    expect(await tenantContainers(tenant)).toHaveLength(1);
    const exited = new Promise<void>((resolve) => {
      client.onclose = () => resolve();
    });
    const pid = (client.transport as StdioClientTransport).pid;
    if (!pid) throw new Error("no server process");
    process.kill(pid, name);
    await exited;
    expect(await tenantContainers(tenant)).toEqual([]);
  });
});
