/**
 * The per-session bound on egress audit records against a real gateway: a sandbox that opens 2,000
 * connections to its gateway and abandons them makes one connection record each (a `deny`, domain
 * `-`); at most the bound's records are written, and the rest arrive as summaries whose counts add
 * up to exactly the records not written (issue 11's class: one session must not fill the host's disk).
 * The gateway keeps no engine log of those lines either (attack 37 F2): its LogConfig is `none`.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  type AuditDropSummary,
  type ConnectionAudit,
  ROLE_LABEL,
  SESSION_LABEL,
} from "../../../src/egress/index.js";
import { createSandbox, getDocker } from "../../../src/sandbox/index.js";
import type { Sandbox } from "../../../src/sandbox/types.js";
import { describeEngine } from "../../helpers/engine.js";
import { leftovers, run, testTenant } from "../../helpers/sandbox-fixture.js";

const tenant = testTenant("egress-flood");
const CONNECTIONS = 2000;
const LIMIT = { recordsPerSecond: 5, burst: 20 };

// Opens `count` TCP connections to the proxy in rounds of 250, each round closed at once, no byte sent.
const FLOOD = `
import os, socket, sys
host, port = os.environ["HTTP_PROXY"].split("//")[1].rstrip("/").split(":")
left = int(sys.argv[1])
while left > 0:
    n = min(250, left); left -= n
    socks = [socket.create_connection((host, int(port)), timeout=10) for _ in range(n)]
    for s in socks: s.close()
print("OK")
`;

describeEngine("network egress: the audit records of a connection flood are bounded", () => {
  let sandbox: Sandbox;
  const written: ConnectionAudit[] = [];
  const summaries: AuditDropSummary[] = [];
  const droppedCount = () => summaries.reduce((n, s) => n + s.dropped, 0);

  beforeAll(async () => {
    sandbox = await createSandbox({
      tenant,
      ttlMs: 120_000,
      network: {
        mode: "allowlist",
        rules: [{ host: "allowed.test", ports: [443], decision: "allow" }],
        auditLimit: LIMIT,
        onConnection: (r) => written.push(r),
        onAuditDropped: (s) => summaries.push(s),
      },
    });
    await sandbox.writeFile("/tmp/flood.py", Buffer.from(FLOOD));
  }, 120_000);

  afterAll(async () => {
    await sandbox?.destroy();
    expect(await leftovers(tenant)).toEqual([]);
  });

  it("writes at most the bound's records and summarises the others with their exact count", async () => {
    const started = Date.now();
    const res = await run(sandbox, { argv: ["python3", "/tmp/flood.py", String(CONNECTIONS)] });
    expect(res.stdout.trim()).toBe("OK");
    // Every connection's line arrives; the last summary one window after its first drop.
    // Until they have (the test's timeout, not a count of polls, bounds the wait).
    while (written.length + droppedCount() < CONNECTIONS) await new Promise((r) => setTimeout(r, 100));
    const seconds = Math.ceil((Date.now() - started) / 1000);
    expect(written.length + droppedCount()).toBe(CONNECTIONS);
    expect(written.length).toBeLessThanOrEqual(LIMIT.burst + LIMIT.recordsPerSecond * seconds);
    expect(written.length).toBeGreaterThanOrEqual(LIMIT.burst);
    expect(written.every((r) => r.decision === "deny" && r.domain === "-")).toBe(true);
    expect(summaries.every((s) => s.reason === "rate-limit" && s.sessionId === sandbox.info.sessionId)).toBe(
      true,
    );
    expect(summaries.map((s) => s.decisions)).toEqual(summaries.map((s) => ({ deny: s.dropped })));
    // One summary per window of one second at most.
    expect(summaries.length).toBeLessThanOrEqual(seconds);
  }, 120_000);

  it("keeps no engine log of the flood's lines on the host's disk: the gateway has no log driver", async () => {
    const docker = getDocker();
    const [gateway] = await docker.listContainers({
      filters: { label: [`${ROLE_LABEL}=gateway`, `${SESSION_LABEL}=${sandbox.info.sessionId}`] },
    });
    expect(gateway).toBeDefined();
    const info = await docker.getContainer(gateway!.Id).inspect();
    expect(info.HostConfig.LogConfig).toEqual({ Type: "none", Config: {} });
    expect(info.LogPath).toBe("");
    // The engine has nothing to give back: its log of the 2,000 connection records was never written.
    const logs = docker.getContainer(gateway!.Id).logs({ stdout: true, stderr: true });
    await expect(logs).rejects.toMatchObject({ statusCode: 501 });
  });
});
