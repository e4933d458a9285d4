/**
 * The gateway refuses a CONNECT at the CONNECT when its line already decides it (issue 40): an IP
 * literal (IPv4 or IPv6, loopback included), a port no rule lists for an allowed name, a denied
 * name, an unlisted name, and a listed name that resolves to a refused address each get
 * `HTTP/1.1 403 Forbidden` as the CONNECT's answer, so a client stops before TLS (curl's
 * `CONNECT tunnel failed, response 403`; Python's `Tunnel connection failed: 403 Forbidden`) and
 * the gateway never sees a ClientHello. Each is audited as before: decision, rule and refusal.
 */
import { beforeAll, expect, it } from "vitest";
import type { ConnectionAudit } from "../../../src/egress/index.js";
import type { Sandbox } from "../../../src/sandbox/types.js";
import { describeEngine } from "../../helpers/engine.js";
import { run, testTenant } from "../../helpers/sandbox-fixture.js";
import { NET_CLIENT } from "./client.js";
import { useEgressSession } from "./session-fixture.js";
import type { EgressTestbed } from "./testbed.js";
import { WIRE_CLIENT } from "./wire-client.js";

const tenant = testTenant("egress-refusal");
const TUNNEL_REFUSED = "ERR URLError <urlopen error Tunnel connection failed: 403 Forbidden>";

/** One refused CONNECT: its target, the record's domain, and the decision, rule and refusal expected. */
interface Case {
  name: string;
  target: (bed: EgressTestbed) => string;
  /** False where Python's urllib cannot say the target (an IPv6 literal: 3.11 drops its brackets). */
  urllib: boolean;
  domain: (bed: EgressTestbed) => string;
  port: number;
  rule: string;
  refusal?: ConnectionAudit["refusal"];
}

const CASES: Case[] = [
  {
    name: "an IPv4 literal (the public test host's own address)",
    target: (bed) => `${bed.publicAddress}:443`,
    urllib: true,
    domain: (bed) => bed.publicAddress,
    port: 443,
    rule: "ip-literal",
  },
  {
    name: "an IPv6 literal ([::1])",
    target: () => "[::1]:443",
    urllib: false,
    domain: () => "::1",
    port: 443,
    rule: "ip-literal",
  },
  {
    name: "loopback (127.0.0.1)",
    target: () => "127.0.0.1:443",
    urllib: true,
    domain: () => "127.0.0.1",
    port: 443,
    rule: "ip-literal",
  },
  {
    name: "a port no rule lists for an allowed name",
    target: () => "allowed.test:8443",
    urllib: true,
    domain: () => "allowed.test",
    port: 8443,
    rule: "not-listed",
  },
  {
    name: "a denied name",
    target: () => "denied.test:443",
    urllib: true,
    domain: () => "denied.test",
    port: 443,
    rule: "deny denied.test:80+443",
  },
  {
    name: "an unlisted name",
    target: () => "other.test:443",
    urllib: true,
    domain: () => "other.test",
    port: 443,
    rule: "not-listed",
  },
  {
    name: "an allowed name that resolves to a refused (private) address",
    target: () => "private.test:443",
    urllib: true,
    domain: () => "private.test",
    port: 443,
    rule: "refused-address (allow private.test:80+443)",
    refusal: "refused-address",
  },
];

describeEngine("network egress: a CONNECT the gateway refuses gets 403 at the CONNECT", () => {
  let bed: EgressTestbed;
  let sandbox: Sandbox;
  const python = async (script: string, ...args: string[]) =>
    (await run(sandbox, { argv: ["python3", script, ...args] })).stdout.trim();

  const session = useEgressSession({
    tenant,
    rules: [
      { host: "allowed.test", ports: [80, 443], decision: "allow" },
      { host: "private.test", ports: [80, 443], decision: "allow" },
      { host: "denied.test", ports: [80, 443], decision: "deny" },
    ],
    files: { "/tmp/net.py": NET_CLIENT, "/tmp/wire.py": WIRE_CLIENT },
    privateNetwork: true,
  });
  const audit = session.audit;
  beforeAll(() => {
    bed = session.bed();
    sandbox = session.sandbox();
  });

  it.each(CASES)("refuses $name with 403 at the CONNECT, before any TLS", async (c) => {
    const from = audit.length;
    // The exchange on the wire: the CONNECT's own status line, and the client never starts TLS.
    // (Soft: the audit below is checked even when the status is wrong, so a failure shows both.)
    expect
      .soft(await python("/tmp/wire.py", "connect", c.target(bed)))
      .toBe("HTTP/1.1 403 Forbidden | no TLS");
    // A client through the proxy variables (urllib, as pip's) sees the tunnel refused.
    if (c.urllib) {
      const url = `https://${c.target(bed).replace(/:443$/, "")}/hello`;
      expect.soft(await python("/tmp/net.py", "get", url)).toBe(TUNNEL_REFUSED);
    }
    // The records since this case began: one per connection (a record arrives when its
    // connection ends; the test's timeout bounds the wait).
    const count = c.urllib ? 2 : 1;
    while (audit.length < from + count) await new Promise((r) => setTimeout(r, 100));
    const records = audit.slice(from);
    const expected = [c.domain(bed), "CONNECT", c.port, "deny", c.rule, c.refusal];
    expect(records.map((r) => [r.domain, r.method, r.port, r.decision, r.rule, r.refusal])).toEqual(
      Array.from({ length: count }, () => expected),
    );
    // No connection to an origin, and no ClientHello seen: a refused CONNECT carries no SNI.
    expect(records.map((r) => [r.remoteAddress, r.sni])).toEqual(
      Array.from({ length: count }, () => [undefined, undefined]),
    );
  });

  it("reached neither test host with any of them", async () => {
    expect(await bed.hostLog("private", "requests")).toBe("");
    const reached = (await bed.hostLog("public", "requests")).split("\n").filter((l) => l !== "");
    expect(reached).toEqual([]);
  });

  it("still opens a tunnel to an allowed name on a listed port (200, then TLS with the session CA)", async () => {
    expect(await python("/tmp/wire.py", "connect", "allowed.test:443")).toBe(
      "HTTP/1.1 200 Connection established | TLS then HTTP/1.1 200 OK",
    );
    expect(await python("/tmp/net.py", "get", "https://allowed.test/hello")).toBe(
      "OK 200 hello from public as allowed.test",
    );
  });
});
