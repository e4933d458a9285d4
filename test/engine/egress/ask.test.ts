/**
 * `ask` network rules against a real engine (docs/network.md): a connection to a domain under an
 * `ask` rule waits in the gateway while the session's approver is asked over the gateway's stdio
 * (images/gateway/warden-relay); yes lets it through (HTTP and HTTPS), no refuses it, "allow for
 * the session" lets later connections to exactly that host and port through without asking, and
 * no answer within the approval timeout refuses it. Each connection's audit record says how it
 * was answered.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type {
  ConnectionAudit,
  NetworkApprovalAnswer,
  NetworkApprovalRequest,
} from "../../../src/egress/index.js";
import { createSandbox } from "../../../src/sandbox/index.js";
import type { Sandbox } from "../../../src/sandbox/types.js";
import { describeEngine } from "../../helpers/engine.js";
import { leftovers, run, testTenant } from "../../helpers/sandbox-fixture.js";
import { auditRecordsOf, NET_CLIENT } from "./client.js";
import { type EgressTestbed, startEgressTestbed } from "./testbed.js";

const tenant = testTenant("egress-ask");
const TIMEOUT_MS = 2_500;
/** A refused tunnel: refused at the CONNECT, before any TLS (urllib's wording). */
const REFUSED_TLS = "ERR URLError <urlopen error Tunnel connection failed: 403 Forbidden>";

describeEngine("network egress: ask rules through the approver", () => {
  let bed: EgressTestbed;
  let sandbox: Sandbox;
  const audit: ConnectionAudit[] = [];
  /** What the approver was asked (without the signal), and the answers it gives in turn. */
  const asked: Omit<NetworkApprovalRequest, "signal">[] = [];
  const signals: AbortSignal[] = [];
  const answers: Array<NetworkApprovalAnswer | "never"> = [];
  const net = async (...args: string[]) =>
    (await run(sandbox, { argv: ["python3", "/tmp/net.py", ...args] })).stdout.trim();
  /** The audit records of `domain`, once the gateway has logged `count` of them. */
  const auditOf = (domain: string, count: number) => auditRecordsOf(audit, domain, count);
  const summary = (r: ConnectionAudit) => [r.method, r.port, r.decision, r.ask, r.rule];
  /** The records of `domain` but the requests inside opened tunnels (their tunnel was asked about). */
  const connectionsOf = async (domain: string, count: number) =>
    (await auditOf(domain, count)).filter((r) => r.method === "CONNECT" || r.sni === undefined);

  beforeAll(async () => {
    bed = await startEgressTestbed();
    sandbox = await createSandbox({
      tenant,
      ttlMs: 180_000,
      network: {
        mode: "allowlist",
        rules: [
          { host: "ask.test", ports: [80, 443], decision: "ask" },
          { host: "other.test", ports: [80, 443], decision: "ask" },
          { host: "pypi.test", ports: [80, 443], decision: "ask" },
          { host: "allowed.test", ports: [80, 443], decision: "ask" },
        ],
        egressNetworks: [bed.publicNetwork],
        caBundlePath: bed.caBundlePath,
        onConnection: (r) => audit.push(r),
        approvalTimeoutMs: TIMEOUT_MS,
        approve: ({ signal, ...request }) => {
          asked.push(request);
          signals.push(signal);
          const answer = answers.shift() ?? "deny";
          return answer === "never" ? new Promise<never>(() => {}) : Promise.resolve(answer);
        },
      },
    });
    await sandbox.writeFile("/tmp/net.py", Buffer.from(NET_CLIENT));
  }, 120_000);

  afterAll(async () => {
    await sandbox?.destroy();
    await bed?.dispose();
    expect(await leftovers(tenant)).toEqual([]);
  });

  it("lets a connection through over HTTP and HTTPS when the approver says yes, naming session, host, port and rule", async () => {
    answers.push("allow-once", "allow-once");
    expect(await net("get", "http://ask.test/hello")).toBe("OK 200 hello from public as ask.test");
    expect(await net("get", "https://ask.test/hello")).toBe("OK 200 hello from public as ask.test");
    const session = sandbox.info.sessionId;
    expect(asked).toEqual([
      { sessionId: session, host: "ask.test", port: 80, rule: "ask ask.test:80+443" },
      { sessionId: session, host: "ask.test", port: 443, rule: "ask ask.test:80+443" },
    ]);
    const records = await auditOf("ask.test", 3);
    expect((await connectionsOf("ask.test", 3)).map(summary)).toEqual([
      ["GET", 80, "ask→allow", "once", "ask ask.test:80+443"],
      ["CONNECT", 443, "ask→allow", "once", "ask ask.test:80+443"],
    ]);
    // The request inside the approved tunnel, not asked again.
    expect(records.filter((r) => r.method === "GET" && r.sni === "ask.test").map(summary)).toEqual([
      ["GET", 443, "allow", undefined, "ask ask.test:80+443"],
    ]);
  });

  it("refuses the connection when the approver says no", async () => {
    asked.length = 0;
    answers.push("deny", "deny");
    expect(await net("get", "http://ask.test/hello")).toBe("ERR HTTPError HTTP Error 403: Forbidden");
    expect(await net("get", "https://ask.test/hello")).toBe(REFUSED_TLS);
    expect(asked.map((a) => a.port)).toEqual([80, 443]);
    expect((await connectionsOf("ask.test", 5)).slice(2).map(summary)).toEqual([
      ["GET", 80, "ask→deny", "denied", "ask ask.test:80+443 (denied by the approver)"],
      ["CONNECT", 443, "ask→deny", "denied", "ask ask.test:80+443 (denied by the approver)"],
    ]);
  });

  it("does not ask again for the host and port allowed for the session; another port or host asks", async () => {
    asked.length = 0;
    answers.push("allow-session");
    expect(await net("get", "https://other.test/hello")).toBe("OK 200 hello from public as other.test");
    expect(await net("get", "https://other.test/hello")).toBe("OK 200 hello from public as other.test");
    expect(asked.map((a) => `${a.host}:${a.port}`)).toEqual(["other.test:443"]);
    answers.push("deny", "deny");
    expect(await net("get", "http://other.test/hello")).toBe("ERR HTTPError HTTP Error 403: Forbidden");
    expect(await net("get", "https://pypi.test/hello")).toBe(REFUSED_TLS);
    expect(asked.map((a) => `${a.host}:${a.port}`)).toEqual([
      "other.test:443",
      "other.test:80",
      "pypi.test:443",
    ]);
    expect((await connectionsOf("other.test", 5)).map(summary)).toEqual([
      ["CONNECT", 443, "ask→allow", "session", "ask other.test:80+443"],
      ["CONNECT", 443, "ask→allow", "cached", "ask other.test:80+443"],
      ["GET", 80, "ask→deny", "denied", "ask other.test:80+443 (denied by the approver)"],
    ]);
  });

  it(`refuses a connection nobody answers within the approval timeout (${TIMEOUT_MS} ms)`, async () => {
    asked.length = 0;
    signals.length = 0;
    answers.push("never");
    const started = Date.now();
    expect(await net("get", "http://allowed.test/hello")).toBe("ERR HTTPError HTTP Error 403: Forbidden");
    const waitedMs = Date.now() - started;
    expect(waitedMs).toBeGreaterThanOrEqual(TIMEOUT_MS);
    expect(asked.map((a) => `${a.host}:${a.port}`)).toEqual(["allowed.test:80"]);
    expect(signals[0]?.aborted).toBe(true);
    const [record] = await auditOf("allowed.test", 1);
    expect(record && summary(record)).toEqual([
      "GET",
      80,
      "ask→deny",
      "timeout",
      `ask allowed.test:80+443 (no answer within ${TIMEOUT_MS} ms)`,
    ]);
    expect(record?.durationMs).toBeGreaterThanOrEqual(TIMEOUT_MS);
    expect(await bed.hostLog("public", "requests")).not.toMatch(/^allowed\.test /m);
  }, 30_000);
});
