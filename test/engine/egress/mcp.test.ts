/**
 * `warden mcp` over stdio (the SDK's client, the built CLI) takes a policy file's `network:`
 * section as `warden exec` does: the domain it allows is reachable through the gateway, a domain
 * it does not list is refused, and each connection is a `warden: net …` line on stderr; with
 * `--allow-net` as one more layer, strictest wins.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
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

  /** Starts `warden mcp` with `extra` args; returns the client, its stderr and the bash call's text. */
  const serve = async (extra: string[]) => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [join(REPO, "bin/warden.js"), "mcp", "--workspace", dir, "--tenant", tenant, ...extra],
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    const client = new Client({ name: "warden-test", version: "1" }, { capabilities: {} });
    await client.connect(transport);
    const urls = ["https://allowed.test/hello", "https://pypi.test/hello", "https://denied.test/hello"];
    const result = (await client.callTool({
      name: "bash",
      arguments: { command: `python3 fetch.py ${urls.join(" ")}` },
    })) as CallToolResult;
    const text = result.content.map((c) => (c.type === "text" ? c.text : "")).join("");
    await client.close();
    return { text, stderr: () => stderr };
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
    await new Promise((r) => setTimeout(r, 300));
    expect(stderr()).toMatch(/warden: net allow CONNECT allowed\.test:443 rule="allow allowed\.test:443"/);
    expect(stderr()).toMatch(/warden: net deny CONNECT denied\.test:443 rule="deny denied\.test:\d/);
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
});
