/**
 * `warden mcp` over stdio (the SDK's client, the built CLI) takes a policy file's `network:`
 * section as `warden exec` does: the domain it allows is reachable through the gateway, a domain
 * it does not list is refused, and each connection is a `warden: net …` line on stderr; with
 * `--allow-net` as one more layer, strictest wins. A connection to a domain under an `ask` rule is
 * put to the client's user by MCP elicitation (allow once, allow for the session, decline), and
 * refused as non-interactive when the client does not support elicitation.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  type CallToolResult,
  type ElicitRequest,
  ElicitRequestSchema,
  type ElicitResult,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeEngine } from "../../helpers/engine.js";
import { containersLeft, REPO } from "../../helpers/mcp-fixture.js";
import { testTenant } from "../../helpers/sandbox-fixture.js";
import { type EgressTestbed, startEgressTestbed } from "./testbed.js";

const tenant = testTenant("egress-mcp");

/** Python that fetches each URL and prints its body or `refused URL`. */
const FETCH = [
  "import sys, urllib.request as u",
  "for url in sys.argv[1:]:",
  "    try: print(u.urlopen(url, timeout=8).read().decode().strip())",
  "    except Exception as e: print('refused', url)",
].join("\n");

describeEngine("warden mcp: the policy's network section", () => {
  let bed: EgressTestbed;
  let dir: string;
  let policy: string;
  beforeAll(async () => {
    bed = await startEgressTestbed();
    dir = await mkdtemp(join(tmpdir(), "warden-egress-mcp-"));
    policy = join(dir, "net.yaml");
    await writeFile(
      policy,
      [
        "default: allow",
        "rules: []",
        "network:",
        "  allow: [allowed.test:443, pypi.test:443]",
        "  ask: [ask.test:443]",
        "  deny: [denied.test]",
        "",
      ].join("\n"),
    );
    await writeFile(join(dir, "fetch.py"), FETCH);
  }, 60_000);
  afterAll(async () => {
    await bed?.dispose();
    if (dir) await rm(dir, { recursive: true, force: true });
    expect(await containersLeft(tenant)).toEqual([]);
  });

  /**
   * Starts `warden mcp` with `extra` args and fetches `urls` in one bash call; returns the call's
   * text, the server's stderr and the elicitations the client got. With `elicit` the client
   * declares elicitation and answers each request with it; without, it lacks the capability.
   */
  const serve = async (
    extra: string[],
    urls = ["https://allowed.test/hello", "https://pypi.test/hello", "https://denied.test/hello"],
    elicit?: () => ElicitResult,
  ) => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [join(REPO, "bin/warden.js"), "mcp", "--workspace", dir, "--tenant", tenant, ...extra],
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    const client = new Client(
      { name: "warden-test", version: "1" },
      { capabilities: elicit ? { elicitation: {} } : {} },
    );
    const asked: ElicitRequest["params"][] = [];
    if (elicit)
      client.setRequestHandler(ElicitRequestSchema, async (request) => {
        asked.push(request.params);
        return elicit();
      });
    await client.connect(transport);
    const result = (await client.callTool({
      name: "bash",
      arguments: { command: `python3 fetch.py ${urls.join(" ")}` },
    })) as CallToolResult;
    const text = result.content.map((c) => (c.type === "text" ? c.text : "")).join("");
    await client.close();
    return { text, stderr: () => stderr, asked };
  };
  const net = () => ["--egress-network", bed.publicNetwork, "--net-ca-bundle", bed.caBundlePath];

  it("reaches what the policy allows, and nothing else, with one stderr line per connection", async () => {
    const { text, stderr } = await serve(["--policy", policy, ...net()]);
    expect(text).toBe(
      [
        "hello from public as allowed.test",
        "hello from public as pypi.test",
        "refused https://denied.test/hello",
        "",
      ].join("\n"),
    );
    // The gateway's lines come after the answer: until they are in (the test's timeout bounds it).
    await expect
      .poll(stderr)
      .toMatch(/warden: net allow CONNECT allowed\.test:443 rule="allow allowed\.test:443"/);
    await expect.poll(stderr).toMatch(/warden: net deny CONNECT denied\.test:443 rule="deny denied\.test:\d/);
  }, 120_000);

  it("--allow-net narrows the policy's allowlist (strictest wins)", async () => {
    const { text } = await serve(["--policy", policy, "--allow-net", "allowed.test:443", ...net()]);
    expect(text).toBe(
      [
        "hello from public as allowed.test",
        "refused https://pypi.test/hello",
        "refused https://denied.test/hello",
        "",
      ].join("\n"),
    );
  }, 120_000);

  /** The `warden: net` lines of `stderr` once it has `count` of them (the gateway logs a connection as it ends). */
  const netLines = async (stderr: () => string, count: number) => {
    const lines = () =>
      stderr()
        .split("\n")
        .filter((l) => l.startsWith("warden: net "));
    await expect.poll(() => lines().length).toBeGreaterThanOrEqual(count);
    return lines();
  };
  /** A `warden: net` line with its byte counts and duration as `…`. */
  const shape = (line: string) => line.replace(/ out=\d+B in=\d+B \d+ms$/, " out=…B in=…B …ms");
  const ask = "https://ask.test/hello";

  it("asks the client's user for an ask domain: once lets it through, decline refuses, session covers the next", async () => {
    const answers: ElicitResult[] = [
      { action: "accept", content: { decision: "allow-once" } },
      { action: "decline" },
      { action: "accept", content: { decision: "allow-session" } },
    ];
    const { text, stderr, asked } = await serve(["--policy", policy, ...net()], [ask, ask, ask, ask], () => {
      const answer = answers.shift();
      if (!answer) throw new Error("asked more often than expected");
      return answer;
    });
    expect(text).toBe(
      [
        "hello from public as ask.test",
        `refused ${ask}`,
        "hello from public as ask.test",
        "hello from public as ask.test",
        "",
      ].join("\n"),
    );
    const session = /session (\S+) ready/.exec(stderr())?.[1];
    expect(asked).toHaveLength(3);
    expect(asked[0]?.message).toBe(
      `warden: Network connection needs approval: session ${session} connects to ask.test:443\n  asked by rule 'ask ask.test:443'`,
    );
    // Each approved tunnel, then the request inside it (the gateway opened the tunnel to check it).
    const inside = 'warden: net allow GET ask.test:443 rule="ask ask.test:443" out=…B in=…B …ms';
    expect((await netLines(stderr, 7)).map(shape)).toEqual([
      'warden: net ask→allow CONNECT ask.test:443 ask=once rule="ask ask.test:443" out=…B in=…B …ms',
      inside,
      'warden: net ask→deny CONNECT ask.test:443 ask=denied rule="ask ask.test:443 (denied by the approver)" out=…B in=…B …ms',
      'warden: net ask→allow CONNECT ask.test:443 ask=session rule="ask ask.test:443" out=…B in=…B …ms',
      inside,
      'warden: net ask→allow CONNECT ask.test:443 ask=cached rule="ask ask.test:443" out=…B in=…B …ms',
      inside,
    ]);
  }, 120_000);

  it("refuses an ask domain as non-interactive when the client does not support elicitation", async () => {
    const { text, stderr } = await serve(["--policy", policy, ...net()], [ask]);
    expect(text).toBe(`refused ${ask}\n`);
    expect((await netLines(stderr, 1)).map(shape)).toEqual([
      'warden: net ask→deny CONNECT ask.test:443 ask=non-interactive rule="ask ask.test:443 (nobody to ask: non-interactive)" out=…B in=…B …ms',
    ]);
  }, 120_000);
});
