/**
 * `warden serve` and egress: a tenant's `network` bound; a session that asks for a domain within it
 * reaches that domain through its gateway and nothing else, one asking beyond it is refused (400),
 * each connection is a `network` audit line and counts in warden_egress_connections_total. A
 * connection under the bound's `ask` rule waits in the HTTP approvals until it is answered.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { resolveServerConfig } from "../../../src/server/config/index.js";
import type { RunningServer } from "../../../src/server/server.js";
import { hashKey } from "../../../src/server/tenancy/auth.js";
import { describeEngine } from "../../helpers/engine.js";
import { removeTenant, startTestServer, testQuotas } from "../../helpers/server-fixture.js";
import { networkAuditLines } from "./client.js";
import { type EgressTestbed, startEgressTestbed } from "./testbed.js";

const tenant = `test-egress-serve-${process.pid}`;
const KEY = "egress-serve-key";

describeEngine("warden serve: tenant network bound", () => {
  let bed: EgressTestbed;
  let server: RunningServer;
  let dir: string;
  const call = (path: string, init: RequestInit = {}) =>
    fetch(`${server.url}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", ...init.headers },
    });

  /** Creates a session that asks for `entry`; resolves its id. */
  const createSession = async (entry: string) => {
    const created = await call("/v1/sessions", {
      method: "POST",
      body: JSON.stringify({ network: { allow: [entry] } }),
    });
    expect(created.status).toBe(201);
    return ((await created.json()) as { id: string }).id;
  };

  beforeAll(async () => {
    bed = await startEgressTestbed();
    dir = await mkdtemp(join(tmpdir(), "warden-egress-serve-"));
    const config = resolveServerConfig(
      {
        port: 0,
        stateDir: "state",
        tenants: [
          {
            id: tenant,
            keys: [{ id: "k", sha256: hashKey(KEY) }],
            quotas: testQuotas(4),
            network: {
              allow: ["allowed.test:443", "pypi.test:443"],
              ask: ["ask.test:443"],
              egressNetworks: [bed.publicNetwork],
              caBundle: bed.caBundlePath,
            },
          },
        ],
      },
      dir,
    );
    server = await startTestServer(config);
  }, 60_000);

  afterAll(async () => {
    await server?.shutdown(0);
    await removeTenant(tenant);
    await bed?.dispose();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("lets a session reach what it asked for within the bound, audits and counts each connection", async () => {
    const id = await createSession("allowed.test:443");
    const script = [
      "import urllib.request as u",
      "for url in ['https://allowed.test/hello', 'https://pypi.test/hello']:",
      "    try: print(u.urlopen(url, timeout=8).read().decode().strip())",
      "    except Exception as e: print('refused', url)",
    ].join("\n");
    const res = await call(`/v1/sessions/${id}/tool-calls`, {
      method: "POST",
      body: JSON.stringify({
        toolCalls: [{ id: "c", name: "bash", arguments: { command: `python3 -c "${script}"` } }],
      }),
    });
    const body = (await res.json()) as { results: { content: { text: string }[] }[] };
    const text = body.results[0]?.content[0]?.text ?? "";
    expect(text).toContain("hello from public as allowed.test");
    expect(text).toContain("refused https://pypi.test/hello"); // in the tenant's bound, not asked for
    // The tunnel, the request inside it (the gateway opened the tunnel to check it), the refusal:
    // their lines arrive after the answer (the test's timeout, not a fixed wait, bounds this).
    await expect
      .poll(async () =>
        (await networkAuditLines(join(dir, "state", "audit.jsonl"))).map((a) => [
          a.session,
          a.domain,
          a.decision,
          a.rule,
          a.insideTunnel,
        ]),
      )
      .toEqual([
        [id, "allowed.test", "allow", "allow allowed.test:443", undefined],
        [id, "allowed.test", "allow", "allow allowed.test:443", true],
        [id, "pypi.test", "deny", "not-listed", undefined],
      ]);
    // Each names the one call that was running when it started: the call that made it.
    const lines = await networkAuditLines(join(dir, "state", "audit.jsonl"));
    expect(lines.map((a) => a.toolCallId)).toEqual(["c", "c", "c"]);
    const metrics = await (await call("/metrics")).text();
    expect(metrics).toContain(`warden_egress_connections_total{tenant="${tenant}",decision="allow"} 2`);
    expect(metrics).toContain(`warden_egress_connections_total{tenant="${tenant}",decision="deny"} 1`);
    await call(`/v1/sessions/${id}`, { method: "DELETE" });
  }, 90_000);

  it("holds a connection under an ask rule in GET /v1/approvals; answering it lets the fetch complete", async () => {
    // The sandbox image has no curl: Python's urllib fetches through the proxy variables.
    const id = await createSession("ask.test:443");
    const fetched = call(`/v1/sessions/${id}/tool-calls`, {
      method: "POST",
      body: JSON.stringify({
        toolCalls: [
          {
            id: "c",
            name: "bash",
            arguments: {
              command: `python3 -c "import urllib.request as u; print(u.urlopen('https://ask.test/hello', timeout=60).read().decode().strip())"`,
            },
          },
        ],
      }),
    });
    type Pending = { id: string; createdAt: string } & Record<string, unknown>;
    let pending: Pending[] = [];
    while (pending.length === 0) {
      await new Promise((r) => setTimeout(r, 200));
      pending = ((await (await call("/v1/approvals")).json()) as { approvals: Pending[] }).approvals;
    }
    expect(pending.map(({ id: _id, createdAt: _at, ...p }) => p)).toEqual([
      {
        sessionId: id,
        tool: "network",
        args: { host: "ask.test", port: 443 },
        decision: "ask",
        rule: "ask ask.test:443",
        reason: "the sandbox connects to ask.test:443",
        part: "ask.test:443",
        network: { host: "ask.test", port: 443, rule: "ask ask.test:443" },
      },
    ]);
    const answered = await call(`/v1/approvals/${pending[0]?.id}`, {
      method: "POST",
      body: JSON.stringify({ decision: "allow-once" }),
    });
    expect(answered.status).toBe(200);
    const body = (await (await fetched).json()) as { results: { content: { text: string }[] }[] };
    expect(body.results[0]?.content[0]?.text).toBe("hello from public as ask.test\n");
    // The approved tunnel, and the request inside it (not asked again), once their lines are in.
    await expect
      .poll(async () =>
        (await networkAuditLines(join(dir, "state", "audit.jsonl")))
          .filter((a) => a.session === id)
          .map((a) => [a.domain, a.decision, a.ask, a.rule]),
      )
      .toEqual([
        ["ask.test", "ask→allow", "once", "ask ask.test:443"],
        ["ask.test", "allow", undefined, "ask ask.test:443"],
      ]);
    const metrics = await (await call("/metrics")).text();
    expect(metrics).toContain(`warden_egress_connections_total{tenant="${tenant}",decision="ask→allow"} 1`);
    await call(`/v1/sessions/${id}`, { method: "DELETE" });
  }, 120_000);

  it("refuses a session that asks beyond its tenant's bound", async () => {
    const res = await call("/v1/sessions", {
      method: "POST",
      body: JSON.stringify({ network: { allow: ["other.test:443"] } }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toContain(
      `network.allow[0] other.test:443 is not within the network allowlist of tenant '${tenant}'; ask only for hosts and ports it allows, or have the operator add it to the tenant's network.allow in the server config.`,
    );
  });
});
