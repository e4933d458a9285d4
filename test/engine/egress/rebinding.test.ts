/**
 * DNS rebinding is checked at connect (issue 40): the gateway resolves a name itself each time it
 * connects (with `network.resolvers` here: a DNS test host on the public test network whose answer
 * for rebind.test the test sets, TTL 0), checks the address it is about to connect to against the
 * refused ranges, and connects only to that checked address. A name allowed by its rule whose
 * answer flips from the public test host to the private one is refused from then on, and no
 * answer, however it alternates, ever gets a connection to the private host. The public host
 * closes every connection for rebind.test, so each request is a new connection (testbed.ts).
 */
import { beforeAll, expect, it } from "vitest";
import type { ConnectionAudit } from "../../../src/egress/index.js";
import type { Sandbox } from "../../../src/sandbox/types.js";
import { describeEngine } from "../../helpers/engine.js";
import { run, testTenant } from "../../helpers/sandbox-fixture.js";
import { NET_CLIENT } from "./client.js";
import type { DnsTestHost } from "./dns-host.js";
import { useEgressSession } from "./session-fixture.js";
import { type EgressTestbed, REBIND_NAME } from "./testbed.js";

const tenant = testTenant("egress-rebind");
const REACHED = `OK 200 hello from public as ${REBIND_NAME}`;
const HTTP_REFUSED = "ERR HTTPError HTTP Error 403: Forbidden";
const TUNNEL_REFUSED = "ERR URLError <urlopen error Tunnel connection failed: 403 Forbidden>";
const RULE = `allow ${REBIND_NAME}:80+443`;

describeEngine("network egress: a name's address is checked each time the gateway connects", () => {
  let bed: EgressTestbed;
  let dns: DnsTestHost;
  let sandbox: Sandbox;
  const get = async (url: string) =>
    (await run(sandbox, { argv: ["python3", "/tmp/net.py", "get", url] })).stdout.trim();
  /** The records of rebind.test after the first `from`, once there are `count` of them. */
  const recordsAfter = async (from: number, count: number) => {
    const of = () => audit.filter((r) => r.domain === REBIND_NAME).slice(from);
    // A record arrives when its connection ends (the test's timeout bounds the wait).
    while (of().length < count) await new Promise((r) => setTimeout(r, 100));
    return of();
  };
  const seen = () => audit.filter((r) => r.domain === REBIND_NAME).length;
  const aQueries = async () =>
    (await dns.queries()).filter((q) => q.type === 1 && q.name === REBIND_NAME).map((q) => q.answer);

  const session = useEgressSession({
    tenant,
    rules: [{ host: REBIND_NAME, ports: [80, 443], decision: "allow" }],
    files: { "/tmp/net.py": NET_CLIENT },
    privateNetwork: true,
    dns: true,
  });
  const audit = session.audit;
  beforeAll(() => {
    bed = session.bed();
    sandbox = session.sandbox();
    dns = session.dns();
  });

  it("resolves with network.resolvers: the name reaches the public host while it resolves to it", async () => {
    await dns.setAnswers(REBIND_NAME, "sequence", [bed.publicAddress]);
    expect(await get(`http://${REBIND_NAME}/hello`)).toBe(REACHED);
    expect(await get(`https://${REBIND_NAME}/hello`)).toBe(REACHED);
    const records = await recordsAfter(0, 3);
    // (A tunnel's own record may name the address too, when the gateway connects at the CONNECT.)
    const connected = (r: ConnectionAudit) => (r.method === "CONNECT" ? "-" : r.remoteAddress);
    expect(records.map((r) => [r.method, r.port, r.decision, r.rule, connected(r)])).toEqual([
      ["GET", 80, "allow", RULE, bed.publicAddress],
      ["CONNECT", 443, "allow", RULE, "-"],
      ["GET", 443, "allow", RULE, bed.publicAddress],
    ]);
    expect((await aQueries()).length).toBeGreaterThanOrEqual(2);
  });

  it("connects to the address it checked: the answer flips after one request's queries, the first request reaches the public host and the next is refused", async () => {
    const from = seen();
    // How many A queries one plain-HTTP request makes (a gateway may resolve to check the request
    // and again to connect, checking each answer).
    await dns.setAnswers(REBIND_NAME, "sequence", [bed.publicAddress]);
    const before = (await aQueries()).length;
    expect(await get(`http://${REBIND_NAME}/hello`)).toBe(REACHED);
    const perRequest = (await aQueries()).length - before;
    expect(perRequest).toBeGreaterThanOrEqual(1);
    // The public address for the queries of one request, the private one for every later query.
    await dns.setAnswers(REBIND_NAME, "sequence", [
      ...Array.from({ length: perRequest }, () => bed.publicAddress),
      bed.privateAddress,
    ]);
    expect(await get(`http://${REBIND_NAME}/hello`)).toBe(REACHED);
    expect(await get(`http://${REBIND_NAME}/hello`)).toBe(HTTP_REFUSED);
    // Over TLS, the CONNECT's own resolution already gives the private address: 403 at the CONNECT.
    expect(await get(`https://${REBIND_NAME}/hello`)).toBe(TUNNEL_REFUSED);
    expect(await bed.hostLog("private", "requests")).toBe("");
    const records = await recordsAfter(from, 4);
    expect(records.map((r) => [r.method, r.port, r.decision, r.rule, r.refusal, r.remoteAddress])).toEqual([
      ["GET", 80, "allow", RULE, undefined, bed.publicAddress],
      ["GET", 80, "allow", RULE, undefined, bed.publicAddress],
      ["GET", 80, "deny", `refused-address (${RULE})`, "refused-address", undefined],
      ["CONNECT", 443, "deny", `refused-address (${RULE})`, "refused-address", undefined],
    ]);
  });

  it("refuses over TLS once the answer is private (the flip between two requests), reaching nothing", async () => {
    const from = seen();
    await dns.setAnswers(REBIND_NAME, "sequence", [bed.publicAddress]);
    expect(await get(`https://${REBIND_NAME}/hello`)).toBe(REACHED);
    await dns.setAnswers(REBIND_NAME, "sequence", [bed.privateAddress]);
    expect(await get(`https://${REBIND_NAME}/hello`)).toBe(TUNNEL_REFUSED);
    expect(await bed.hostLog("private", "requests")).toBe("");
    const records = await recordsAfter(from, 3);
    const connected = (r: ConnectionAudit) =>
      r.method === "CONNECT" && r.decision === "allow" ? "-" : r.remoteAddress;
    expect(records.map((r) => [r.method, r.decision, r.refusal, connected(r)])).toEqual([
      ["CONNECT", "allow", undefined, "-"],
      ["GET", "allow", undefined, bed.publicAddress],
      ["CONNECT", "deny", "refused-address", undefined],
    ]);
  });

  it("checks every connection: with answers going round public, public, private, each request reaches the public host or is refused, never the private host", async () => {
    const from = seen();
    const queriedBefore = (await aQueries()).length;
    // A round of three: whether a request resolves once or twice (to check, then to connect), some
    // requests get a public answer first and a private one next, the case a gateway that checked
    // one answer and connected by another would send to the private host.
    await dns.setAnswers(REBIND_NAME, "cycle", [bed.publicAddress, bed.publicAddress, bed.privateAddress]);
    const outcomes: string[] = [];
    for (let i = 0; i < 6; i++) outcomes.push(await get(`http://${REBIND_NAME}/hello`));
    for (let i = 0; i < 6; i++) outcomes.push(await get(`https://${REBIND_NAME}/hello`));
    expect(await bed.hostLog("private", "requests")).toBe("");
    // Every request reached the public host or was refused (a refusal inside an opened tunnel is
    // the gateway's error status, whichever it is).
    for (const out of outcomes) expect(out).toMatch(/^(OK 200 hello from public as rebind\.test|ERR .*)$/);
    // Each request resolved the name anew (no answer kept: TTL 0).
    expect((await aQueries()).length - queriedBefore).toBeGreaterThanOrEqual(outcomes.length);
    // Each record either connected to the public address or was refused for the address it got,
    // and both happened.
    const records = await recordsAfter(from, outcomes.length);
    const kinds = new Set(
      records.map((r) =>
        r.method === "CONNECT" && r.decision === "allow"
          ? "tunnel opened"
          : r.decision === "allow"
            ? `connected to ${r.remoteAddress}`
            : `${r.decision} ${r.refusal} ${r.remoteAddress}`,
      ),
    );
    expect([...kinds].filter((k) => k !== "tunnel opened").sort()).toEqual(
      [`connected to ${bed.publicAddress}`, "deny refused-address undefined"].sort(),
    );
  });
});
