/**
 * HTTP/2 inside opened tunnels (issue 40): the gateway offers `h2` and `http/1.1` by ALPN to the
 * sandbox, so a client that offers h2 (curl --http2, Node's http2, browsers' engines) talks
 * HTTP/2 to it, while the gateway talks to the origin in what the origin offers (the test hosts
 * speak HTTP/1.1 only). The request is checked as any: an h2 request whose :authority is not the
 * tunnel's SNI gets 403 and never reaches a host.
 */
import { beforeAll, expect, it } from "vitest";
import type { Sandbox } from "../../../src/sandbox/types.js";
import { describeEngine } from "../../helpers/engine.js";
import { run, testTenant } from "../../helpers/sandbox-fixture.js";
import { useEgressSession } from "./session-fixture.js";
import type { EgressTestbed } from "./testbed.js";
import { H2_CLIENT } from "./wire-client.js";

const tenant = testTenant("egress-h2");

describeEngine("network egress: HTTP/2 inside opened tunnels", () => {
  let bed: EgressTestbed;
  let sandbox: Sandbox;
  const h2 = async (...args: string[]) =>
    (await run(sandbox, { argv: ["node", "/tmp/h2.mjs", ...args] })).stdout.trim();
  /** The requests inside tunnels for `domain`, once there are `count` of them. */
  const insideOf = (domain: string, count = 1) =>
    session.recordsWhere((r) => r.domain === domain && r.method === "GET" && r.insideTunnel === true, count);

  const session = useEgressSession({
    tenant,
    rules: [
      { host: "allowed.test", ports: [443], decision: "allow" },
      { host: "pypi.test", ports: [443], decision: "allow" },
    ],
    files: { "/tmp/h2.mjs": H2_CLIENT },
  });
  beforeAll(() => {
    bed = session.bed();
    sandbox = session.sandbox();
  });

  it("speaks h2 to a client that offers it, and HTTP/1.1 to the origin: the body is the test host's", async () => {
    // Squid 5 offers no ALPN inside the tunnels it opens: the client falls back to HTTP/1.1.
    expect(await h2("https://allowed.test/hello")).toBe("ALPN h2 | 200 hello from public as allowed.test");
    expect(await bed.hostLog("public", "requests")).toBe("allowed.test /hello\n");
    const [request] = await insideOf("allowed.test");
    expect(request).toMatchObject({
      decision: "allow",
      rule: "allow allowed.test:443",
      sni: "allowed.test",
      remoteAddress: bed.publicAddress,
    });
  });

  it("refuses an h2 request whose :authority is not the tunnel's SNI: 403, nothing reaches the host", async () => {
    const before = await bed.hostLog("public", "requests");
    expect(await h2("https://allowed.test/hello", "other.test")).toBe("ALPN h2 | 403");
    expect(await h2("https://allowed.test/hello", "pypi.test")).toBe("ALPN h2 | 403");
    expect(await bed.hostLog("public", "requests")).toBe(before);
    const fronted = [...(await insideOf("other.test")), ...(await insideOf("pypi.test"))];
    expect(fronted.map((r) => [r.sni, r.decision, r.rule, r.refusal])).toEqual([
      ["allowed.test", "deny", "host-sni-mismatch (not-listed)", "host-sni-mismatch"],
      ["allowed.test", "deny", "host-sni-mismatch (allow pypi.test:443)", "host-sni-mismatch"],
    ]);
  });
});
