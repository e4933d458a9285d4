/**
 * The sandbox's DNS (images/gateway/dns.go): the gateway is the sandbox's resolver and answers a
 * name the rules allow or ask about with its own address, never the real one, so a client that
 * resolves a name before it connects through the proxy works; a denied or unlisted name gets
 * NXDOMAIN, and no query is ever forwarded (a DNS test host set as `network.resolvers`, which the
 * gateway itself uses, never sees a sandbox's query), so a name cannot carry data out.
 */
import { beforeAll, expect, it } from "vitest";
import type { Sandbox } from "../../../src/sandbox/types.js";
import { describeEngine } from "../../helpers/engine.js";
import { run, testTenant } from "../../helpers/sandbox-fixture.js";
import { NET_CLIENT } from "./client.js";
import type { DnsTestHost } from "./dns-host.js";
import { useEgressSession } from "./session-fixture.js";

const tenant = testTenant("egress-dns");

/** Resolves each name with the system resolver (getaddrinfo), printing `name address` or `name -`. */
const RESOLVE = `
import socket, sys
for name in sys.argv[1:]:
    try: print(name, sorted({a[4][0] for a in socket.getaddrinfo(name, 443, socket.AF_INET)})[0])
    except socket.gaierror: print(name, "-")
`;

describeEngine("network egress: the sandbox's DNS answers allowed names with the gateway", () => {
  let dns: DnsTestHost;
  let sandbox: Sandbox;
  let gateway = "";

  const session = useEgressSession({
    tenant,
    rules: [
      { host: "allowed.test", ports: [443], decision: "allow" },
      { host: "ask.test", ports: [443], decision: "ask" },
      { host: "*.pypi.test", ports: [443], decision: "allow" },
      { host: "denied.test", ports: [443], decision: "deny" },
    ],
    files: { "/tmp/resolve.py": RESOLVE, "/tmp/net.py": NET_CLIENT },
    dns: true,
  });
  beforeAll(async () => {
    sandbox = session.sandbox();
    dns = session.dns();
    gateway =
      /^http:\/\/([0-9.]+):3128$/.exec(
        (await run(sandbox, { shell: "printf %s $HTTPS_PROXY" })).stdout,
      )?.[1] ?? "";
  });

  it("answers allowed and ask names with the gateway's address, and denied and unlisted names with none", async () => {
    expect(gateway).toMatch(/^[0-9.]+$/);
    const names = [
      "allowed.test",
      "ask.test",
      "files.pypi.test",
      "pypi.test",
      "denied.test",
      "other.test",
      "leak-6e6f.other.test",
    ];
    const got = await run(sandbox, { argv: ["python3", "/tmp/resolve.py", ...names] });
    expect(got.stdout.trim().split("\n")).toEqual([
      `allowed.test ${gateway}`,
      `ask.test ${gateway}`,
      `files.pypi.test ${gateway}`,
      "pypi.test -",
      "denied.test -",
      "other.test -",
      "leak-6e6f.other.test -",
    ]);
    // Over TCP too (a resolver falls back to it for a large answer).
    const tcp = await run(sandbox, {
      shell: "RES_OPTIONS=use-vc getent hosts allowed.test; getent hosts other.test; echo $?",
    });
    expect(tcp.stdout.split(/\s+/).filter(Boolean)).toEqual([gateway, "allowed.test", "2"]);
  });

  it("lets a client that resolves before it connects through the proxy work", async () => {
    const got = await run(sandbox, {
      shell:
        "python3 -c \"import socket; socket.getaddrinfo('allowed.test', 443)\" && python3 /tmp/net.py get https://allowed.test/hello",
    });
    expect(got.stdout.trim()).toBe("OK 200 hello from public as allowed.test");
  });

  it("forwards no query: the resolvers the gateway uses never see the sandbox's names", async () => {
    await run(sandbox, {
      argv: ["python3", "/tmp/resolve.py", "leak-7a7a.other.test", "leak-7b7b.allowed.test"],
    });
    const names = (await dns.queries()).map((q) => q.name);
    expect(names.filter((n) => n.startsWith("leak-"))).toEqual([]);
  });
});
