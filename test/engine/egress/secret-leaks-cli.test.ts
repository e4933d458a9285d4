/**
 * A secret's value leaks through none of the CLI's surfaces (issue 39, docs/secrets.md), with the
 * built CLI (bin/warden.js), the real engine and gateway and the egress testbed's HTTPS host, which
 * records the headers it receives. Each test makes requests with the placeholder: one to the bound
 * host (which receives `Bearer <value>`: the value was used), one to an allowed host the secret is
 * not bound to (refused with the gateway's 403), and searches what the user and the model could see
 * for the value, its URL encoding and its base64 (leak-search.ts):
 * - `warden mcp`: every MCP message both ways (the client's transport), the approval prompts
 *   (elicitations: a network `ask` of the bound host, a tool call's policy `ask` of a command that
 *   holds the placeholder), warden's stderr and the saved patch, and the gateway's error page for
 *   a response from the bound host it cannot parse (Squid's page quotes the request's headers), and
 *   its answer to a TRACE with Max-Forwards: 0 (which echoes the request);
 * - `warden run` with the scripted model in copy mode: the transcript, the saved and exported
 *   patches, the pino log file, stdout (`--json` events) and stderr, and every request the model
 *   provider received (what the model was shown).
 * Needs `npm run build`.
 */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  type CallToolResult,
  type ElicitRequest,
  ElicitRequestSchema,
  type JSONRPCMessage,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeEngine } from "../../helpers/engine.js";
import { containersLeft, REPO } from "../../helpers/mcp-fixture.js";
import { type OpenAITestServer, startOpenAITestServer } from "../../helpers/openai-test-server.js";
import { FETCH_PY, leaksOf, receivedHeaders, testSecretValue } from "./leak-search.js";
import { type EgressTestbed, startEgressTestbed } from "./testbed.js";

const tenant = `test-secret-leaks-cli-${process.pid}`;
const MCP_VALUE = testSecretValue("Mcp");
const RUN_VALUE = testSecretValue("Run");
/** A second secret of the MCP test, bound to a header Squid's error pages show unmasked (unlike Authorization). */
const KEY_VALUE = testSecretValue("Key");

/**
 * The policy: network allow/ask, GITHUB_TOKEN bound to allowed.test and ask.test, API_KEY to
 * allowed.test's X-Api-Key header, a tool-call ask for one command.
 */
const POLICY = [
  "default: allow",
  "rules:",
  "  - id: ask-env",
  "    decision: ask",
  "    tools: [bash]",
  '    commands: ["env"]',
  "network:",
  "  allow: [allowed.test:443, other.test:443]",
  "  ask: [ask.test:443]",
  "secrets:",
  "  GITHUB_TOKEN:",
  "    hosts: [allowed.test, ask.test]",
  "  API_KEY:",
  "    hosts: [allowed.test]",
  "    headers: [x-api-key]",
  "",
].join("\n");

/** The bash command of both tests: a file written with the placeholder and two request results. */
const WRITE_AND_FETCH =
  'echo "$GITHUB_TOKEN" > result.txt; python3 fetch.py https://allowed.test/hello >> result.txt; ' +
  "python3 fetch.py https://other.test/hello >> result.txt; cat result.txt";
const WRITE_AND_FETCH_OUT = "{{GITHUB_TOKEN}}\nOK 200\nERR 403";
/** The first three lines of a result of WRITE_AND_FETCH (the gateway's error page follows them). */
const firstLines = (text: unknown) => String(text).trim().split("\n").slice(0, 3).join("\n");

/** Wraps a transport and keeps every message it sends and receives, as JSON text. */
class RecordingTransport implements Transport {
  readonly messages: string[] = [];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  constructor(private readonly inner: StdioClientTransport) {}
  start(): Promise<void> {
    this.inner.onmessage = (m) => {
      this.messages.push(`in ${JSON.stringify(m)}`);
      this.onmessage?.(m);
    };
    this.inner.onclose = () => this.onclose?.();
    this.inner.onerror = (e) => this.onerror?.(e);
    return this.inner.start();
  }
  send(message: JSONRPCMessage): Promise<void> {
    this.messages.push(`out ${JSON.stringify(message)}`);
    return this.inner.send(message);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

/** Runs `node bin/warden.js args` with `env` added; resolves its exit code, stdout and stderr. */
function wardenCli(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [join(REPO, "bin/warden.js"), ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.once("close", (code) => resolve({ code, stdout, stderr })),
  );
}

describeEngine("secrets: the value is in no MCP message, approval prompt, transcript, patch or log", () => {
  let bed: EgressTestbed;
  let dir: string;
  let policy: string;
  let model: OpenAITestServer | undefined;
  let mcpClient: Client | undefined;
  /** A fresh host workspace holding fetch.py. */
  const workspace = async (name: string) => {
    const ws = join(dir, name);
    await mkdir(ws);
    await writeFile(join(ws, "fetch.py"), FETCH_PY);
    return ws;
  };
  const net = () => ["--egress-network", bed.publicNetwork, "--net-ca-bundle", bed.caBundlePath];

  beforeAll(async () => {
    bed = await startEgressTestbed();
    dir = await mkdtemp(join(tmpdir(), "warden-secret-leaks-"));
    policy = join(dir, "policy.yaml");
    await writeFile(policy, POLICY);
  }, 60_000);
  afterAll(async () => {
    // A failed test leaves its MCP client open: closing it ends warden mcp, which removes the sandbox.
    await mcpClient?.close();
    await model?.close();
    await bed?.dispose();
    if (dir) await rm(dir, { recursive: true, force: true });
    expect(await containersLeft(tenant)).toEqual([]);
  });

  it("warden mcp: no MCP message either way, elicitation, stderr line or patch holds it", async () => {
    const ws = await workspace("mcp-ws");
    const home = join(dir, "mcp-home");
    const inner = new StdioClientTransport({
      command: process.execPath,
      args: [join(REPO, "bin/warden.js"), "mcp", "--workspace", ws, "--tenant", tenant, "--policy", policy]
        .concat(net())
        .concat(["--secret", "GITHUB_TOKEN=env:LEAK_TEST_TOKEN", "--secret", "API_KEY=env:LEAK_TEST_KEY"]),
      env: {
        ...(process.env as Record<string, string>),
        LEAK_TEST_TOKEN: MCP_VALUE,
        LEAK_TEST_KEY: KEY_VALUE,
        WARDEN_HOME: home,
      },
      stderr: "pipe",
    });
    let stderr = "";
    inner.stderr?.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    const transport = new RecordingTransport(inner);
    const client = new Client({ name: "warden-test", version: "1" }, { capabilities: { elicitation: {} } });
    mcpClient = client;
    const asked: ElicitRequest["params"][] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params);
      return { action: "accept", content: { decision: "allow-once" } };
    });
    // A server that exits at start says why on stderr.
    await client.connect(transport).catch((e: Error) => {
      throw new Error(`${e.message}\n${stderr}`);
    });
    const bash = async (command: string) => {
      const result = (await client.callTool({ name: "bash", arguments: { command } })) as CallToolResult;
      return result.content.map((c) => (c.type === "text" ? c.text : "")).join("");
    };
    expect(firstLines(await bash(WRITE_AND_FETCH))).toBe(WRITE_AND_FETCH_OUT);
    // A connection under the network `ask` rule (an elicitation naming the host), then a tool call
    // under the policy's `ask` rule whose command holds the placeholder itself.
    expect((await bash("python3 fetch.py https://ask.test/hello")).trim()).toBe("OK 200");
    expect(
      (
        await bash("env python3 fetch.py https://allowed.test/hello 'Authorization=Bearer {{GITHUB_TOKEN}}'")
      ).trim(),
    ).toBe("OK 200");
    expect(asked.map((a) => a.message.split("\n")[0])).toEqual([
      expect.stringMatching(
        /^warden: Network connection needs approval: session \S+ connects to ask\.test:443$/,
      ),
      `warden: Tool call needs approval: bash {"command":"env python3 fetch.py https://allowed.test/hello 'Authorization=Bearer {{GITHUB_TOKEN}}'"}`,
    ]);
    // The value was used: the bound hosts received it, the unbound one nothing.
    expect(await receivedHeaders(bed, "/hello")).toEqual([
      `Bearer ${MCP_VALUE}`,
      `Bearer ${MCP_VALUE}`,
      `Bearer ${MCP_VALUE}`,
    ]);
    await expect.poll(() => stderr).toMatch(/warden: secret refuse GITHUB_TOKEN GET other\.test:443\/hello/);
    // The bound host answers what the gateway cannot parse: the gateway's page is fixed text, with
    // nothing of the request (neither the placeholder nor the value it forwarded).
    const malformed = await bash("python3 fetch.py https://allowed.test/malformed 'X-Api-Key=$API_KEY'");
    expect(malformed).toBe("ERR 502\nwarden egress gateway: 502 Bad Gateway\n\n");
    expect(await receivedHeaders(bed, "/malformed", "x-api-key")).toEqual([KEY_VALUE]);
    // TRACE is never forwarded (an origin answering it would reflect the forwarded value), nor
    // answered by the gateway with the request.
    const trace = await bash(
      "METHOD=TRACE python3 fetch.py https://allowed.test/hello 'X-Api-Key=$API_KEY' Max-Forwards=0",
    );
    expect(trace).toBe("ERR 405\nwarden egress gateway: 405 Method Not Allowed\n\n");
    await client.close();
    await expect.poll(() => stderr).toMatch(/patch saved to (\S+)/);
    const patchPath = /patch saved to (\S+)/.exec(stderr)?.[1] ?? "";
    const patch = await readFile(patchPath, "utf8");
    expect(patch).toContain("+{{GITHUB_TOKEN}}");
    const texts = {
      "MCP messages": transport.messages.join("\n"),
      elicitations: JSON.stringify(asked),
      stderr,
      patch,
    };
    expect(texts["MCP messages"]).toContain("{{GITHUB_TOKEN}}");
    expect([...leaksOf(MCP_VALUE, texts), ...leaksOf(KEY_VALUE, texts)]).toEqual([]);
  }, 180_000);

  it("warden run (scripted model, copy mode): no transcript, patch, log, output or model request holds it", async () => {
    const ws = await workspace("run-ws");
    const out = join(dir, "run-out");
    await mkdir(out);
    model = await startOpenAITestServer([
      {
        toolCalls: [
          { id: "call_fetch", name: "bash", arguments: JSON.stringify({ command: WRITE_AND_FETCH }) },
        ],
      },
      { content: "Done." },
    ]);
    const before = (await receivedHeaders(bed, "/hello")).length;
    const paths = {
      transcript: join(out, "run.jsonl"),
      patch: join(out, "change.patch"),
      log: join(out, "log.jsonl"),
    };
    const ran = await wardenCli(
      [
        "run",
        "--task",
        "fetch with the token",
        "--workspace",
        ws,
        "--base-url",
        model.baseURL,
        "--model",
        "test-model",
        "--transcript",
        paths.transcript,
        "--export-patch",
        paths.patch,
        "--log-file",
        paths.log,
        "--json",
        "--non-interactive",
        "--tenant",
        tenant,
        "--policy",
        policy,
        ...net(),
        "--secret",
        "GITHUB_TOKEN=env:LEAK_TEST_TOKEN",
      ],
      { LEAK_TEST_TOKEN: RUN_VALUE, OPENAI_API_KEY: "test-key", WARDEN_HOME: join(dir, "run-home") },
    );
    expect(ran.code, ran.stderr).toBe(0);
    expect((await receivedHeaders(bed, "/hello")).slice(before)).toEqual([`Bearer ${RUN_VALUE}`]);
    const toolResult = model.requests[1]?.body.messages.find((m) => m.role === "tool");
    expect(firstLines(toolResult?.content)).toBe(WRITE_AND_FETCH_OUT);
    const texts = {
      transcript: await readFile(paths.transcript, "utf8"),
      "saved patch": await readFile(`${paths.transcript}.patch`, "utf8"),
      "exported patch": await readFile(paths.patch, "utf8"),
      "log file": await readFile(paths.log, "utf8"),
      stdout: ran.stdout,
      stderr: ran.stderr,
      "model requests": JSON.stringify(model.requests),
    };
    expect(texts["exported patch"]).toContain("+{{GITHUB_TOKEN}}");
    expect(texts.stderr).toMatch(/warden: secret use GITHUB_TOKEN GET allowed\.test:443\/hello/);
    expect(leaksOf(RUN_VALUE, texts)).toEqual([]);
  }, 180_000);
});
