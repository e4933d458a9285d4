/**
 * `--allow-net` on the CLI (`warden exec`, in-process): the named domain is reachable through the
 * gateway, another is not, and each connection is one `warden: net …` line on stderr.
 */
import { Command } from "commander";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { registerExec } from "../../../src/cli/commands/exec.js";
import { describeEngine } from "../../helpers/engine.js";
import { leftovers, testTenant } from "../../helpers/sandbox-fixture.js";
import { type EgressTestbed, startEgressTestbed } from "./testbed.js";

const tenant = testTenant("egress-cli");

async function warden(argv: string[]): Promise<{ stdout: string; stderr: string; exitCode: number }> {
  const program = new Command("warden").exitOverride();
  registerExec(program);
  const out: string[] = [];
  const err: string[] = [];
  const outSpy = vi.spyOn(process.stdout, "write").mockImplementation((c) => out.push(String(c)) > 0);
  const errSpy = vi.spyOn(process.stderr, "write").mockImplementation((c) => err.push(String(c)) > 0);
  process.exitCode = undefined;
  try {
    await program.parseAsync(argv, { from: "user" });
    return { stdout: out.join(""), stderr: err.join(""), exitCode: Number(process.exitCode ?? 0) };
  } finally {
    outSpy.mockRestore();
    errSpy.mockRestore();
    process.exitCode = undefined;
  }
}

describeEngine("warden exec --allow-net", () => {
  let bed: EgressTestbed;
  beforeAll(async () => {
    bed = await startEgressTestbed();
  }, 60_000);
  afterAll(async () => {
    await bed?.dispose();
    expect(await leftovers(tenant)).toEqual([]);
  });

  const fetchBoth = [
    "import urllib.request as u",
    "for url in ['https://allowed.test/hello', 'http://other.test/hello']:",
    "    try: print(u.urlopen(url, timeout=8).read().decode().strip())",
    "    except Exception as e: print('refused', url, e)",
  ].join("\n");

  it("reaches the listed domain only, with one stderr line per connection", async () => {
    const net = [
      "--allow-net",
      "allowed.test:443",
      "--egress-network",
      bed.publicNetwork,
      "--net-ca-bundle",
      bed.caBundlePath,
    ];
    const run = await warden([
      "exec",
      "bash",
      JSON.stringify({ command: `python3 -c "${fetchBoth.replace(/"/g, '\\"')}"` }),
      "--tenant",
      tenant,
      // The default policy asks for python3 (refused without a terminal): this test is about the network.
      "--policy",
      "allow-all",
      ...net,
    ]);
    expect(run.stdout).toContain("hello from public as allowed.test");
    expect(run.stdout).toContain("refused http://other.test/hello HTTP Error 403: Forbidden");
    expect(run.stderr).toMatch(
      /warden: net allow CONNECT allowed\.test:443 rule="allow allowed\.test:443" out=\d+B in=\d+B/,
    );
    expect(run.stderr).toMatch(/warden: net deny GET other\.test:80 rule="not-listed"/);
  }, 90_000);

  it("names --net-ca-bundle when the origin's certificate is one the gateway does not trust", async () => {
    // The testbed's origins have certificates of the testbed's own CA, as behind a TLS-intercepting
    // proxy: without --net-ca-bundle the gateway's TLS connection to the origin fails.
    const get =
      "import urllib.request as u\ntry: u.urlopen('https://allowed.test/hello', timeout=8)\nexcept Exception as e: print('refused', e)";
    const run = await warden([
      "exec",
      "bash",
      JSON.stringify({ command: `python3 -c "${get}"` }),
      // The default policy asks before python3 runs, and exec has nobody to ask: the allowlist decides here.
      "--policy",
      "allow-all",
      "--tenant",
      tenant,
      "--allow-net",
      "allowed.test:443",
      "--egress-network",
      bed.publicNetwork,
    ]);
    expect(run.stdout).toContain("refused HTTP Error 502: Bad Gateway");
    expect(run.stderr).toMatch(
      /warden: net deny GET allowed\.test:443 rule="upstream-tls \(allow allowed\.test:443\)" out=\d+B in=\d+B \d+ms; the gateway could not make a verified TLS connection to allowed\.test: if this network intercepts TLS \(a company proxy\), pass that proxy's CA certificate \(PEM\) with --net-ca-bundle FILE; otherwise the origin is unreachable or its certificate is invalid\n/,
    );
  }, 90_000);

  it("refuses a network flag without --allow-net, and an IP literal in it", async () => {
    await expect(warden(["exec", "ls", "{}", "--tenant", tenant, "--net-ca-bundle", "/x"])).rejects.toThrow(
      "--net-ca-bundle and --egress-network need --allow-net",
    );
    await expect(warden(["exec", "ls", "{}", "--tenant", tenant, "--allow-net", "10.0.0.1"])).rejects.toThrow(
      '--allow-net entry 1 "10.0.0.1": the host must be a domain name, not an IP address',
    );
  });
});
