/**
 * WebSockets through the gateway (issue 40): over an opened TLS tunnel to an allowed name
 * (`wss://`) and by absolute URL over plain HTTP (`ws://`), the upgrade gets the origin's
 * `101 Switching Protocols` and frames pass both ways (the test host's /ws echoes each message).
 * The upgrade request is checked like any request: inside a tunnel its Host must be the SNI's
 * (another gets 403, no 101, and never reaches the host); over plain HTTP the name checked is the
 * URL's.
 */
import { beforeAll, expect, it } from "vitest";
import type { Sandbox } from "../../../src/sandbox/types.js";
import { describeEngine } from "../../helpers/engine.js";
import { run, testTenant } from "../../helpers/sandbox-fixture.js";
import { useEgressSession } from "./session-fixture.js";
import type { EgressTestbed } from "./testbed.js";
import { WIRE_CLIENT } from "./wire-client.js";

const tenant = testTenant("egress-ws");

describeEngine("network egress: WebSockets through the gateway", () => {
  let bed: EgressTestbed;
  let sandbox: Sandbox;
  const ws = async (...args: string[]) =>
    (await run(sandbox, { argv: ["python3", "/tmp/wire.py", "ws", ...args] })).stdout.trim();
  /** The records of `domain` on `port` with `method`, once there are `count` of them. */
  const recordsOf = (domain: string, port: number, method: string, count = 1) =>
    session.recordsWhere((r) => r.domain === domain && r.port === port && r.method === method, count);

  const session = useEgressSession({
    tenant,
    rules: [
      { host: "allowed.test", ports: [80, 443], decision: "allow" },
      { host: "pypi.test", ports: [443], decision: "allow" },
    ],
    files: { "/tmp/wire.py": WIRE_CLIENT },
  });
  beforeAll(() => {
    bed = session.bed();
    sandbox = session.sandbox();
  });

  it("opens wss:// to an allowed name: 101 from the origin, a text and a 70000-byte message echoed", async () => {
    // Squid 5 drops the Upgrade header (hop-by-hop): the origin answers a plain GET /ws (404).
    expect(await ws("wss://allowed.test/ws")).toBe(
      "OK HTTP/1.1 101 Switching Protocols | hello over wss | 70000 bytes back",
    );
    expect(await bed.hostLog("public", "requests")).toContain("allowed.test /ws\n");
    const [upgrade] = await recordsOf("allowed.test", 443, "GET");
    expect(upgrade).toMatchObject({
      decision: "allow",
      rule: "allow allowed.test:80+443",
      sni: "allowed.test",
      insideTunnel: true,
      remoteAddress: bed.publicAddress,
    });
  });

  it("opens wss:// with Node's own WebSocket client (undici, the proxy from the environment)", async () => {
    const client = [
      "const ws = new WebSocket(process.argv[2]);",
      'ws.onopen = () => ws.send("hello from node");',
      'ws.onmessage = (e) => { console.log("echo:", e.data); ws.close(); };',
      'ws.onerror = (e) => { console.log("error:", e.message); process.exitCode = 1; };',
    ].join("\n");
    await sandbox.writeFile("/tmp/ws.js", Buffer.from(client));
    const got = await run(sandbox, { shell: "NODE_USE_ENV_PROXY=1 node /tmp/ws.js wss://allowed.test/ws" });
    expect(got.stdout).toBe("echo: hello from node\n");
  });

  it("opens ws:// to an allowed name by absolute URL through the proxy", async () => {
    expect(await ws("ws://allowed.test/ws")).toBe(
      "OK HTTP/1.1 101 Switching Protocols | hello over ws | 70000 bytes back",
    );
    const [upgrade] = await recordsOf("allowed.test", 80, "GET");
    expect(upgrade).toMatchObject({
      decision: "allow",
      rule: "allow allowed.test:80+443",
      remoteAddress: bed.publicAddress,
    });
    expect(upgrade?.sni).toBeUndefined();
  });

  it("refuses an upgrade inside a tunnel whose Host is not the SNI's: 403, no 101, nothing reaches the host", async () => {
    const before = await bed.hostLog("public", "requests");
    // Unlisted, and listed (pypi.test allows 443): each is domain fronting inside allowed.test's tunnel.
    expect(await ws("wss://allowed.test/ws", "other.test")).toBe("ERR HTTP/1.1 403 Forbidden");
    expect(await ws("wss://allowed.test/ws", "pypi.test")).toBe("ERR HTTP/1.1 403 Forbidden");
    expect(await bed.hostLog("public", "requests")).toBe(before);
    const fronted = [
      ...(await recordsOf("other.test", 443, "GET")),
      ...(await recordsOf("pypi.test", 443, "GET")),
    ];
    expect(fronted.map((r) => [r.sni, r.decision, r.rule, r.refusal, r.remoteAddress])).toEqual([
      ["allowed.test", "deny", "host-sni-mismatch (not-listed)", "host-sni-mismatch", undefined],
      ["allowed.test", "deny", "host-sni-mismatch (allow pypi.test:443)", "host-sni-mismatch", undefined],
    ]);
  });

  it("checks a ws:// upgrade by its URL's name: an unlisted one is refused whatever its Host says", async () => {
    const before = await bed.hostLog("public", "requests");
    expect(await ws("ws://other.test/ws", "allowed.test")).toBe("ERR HTTP/1.1 403 Forbidden");
    expect(await bed.hostLog("public", "requests")).toBe(before);
    const [refused] = await recordsOf("other.test", 80, "GET");
    expect([refused?.decision, refused?.rule, refused?.remoteAddress]).toEqual([
      "deny",
      "not-listed",
      undefined,
    ]);
  });
});
