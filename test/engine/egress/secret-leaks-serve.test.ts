/**
 * A secret of `warden serve`'s store leaks through neither its approvals nor its metrics (issue 39,
 * docs/secrets.md): the real server (in this process), the engine, the gateway and the egress
 * testbed's HTTPS host, which records the headers it receives. Every bash call of the tenant's
 * policy asks, and the secret's bound host ask.test is under the tenant's network `ask` rule, so
 * GET /v1/approvals holds a tool call whose command carries the placeholder (never the value) and
 * a connection to the bound host; the calls' streamed events (`approval_requested` among them) and
 * answers, every /v1/approvals answer and GET /metrics after the requests are searched for the
 * value, its URL encoding and its base64 (leak-search.ts), once the bound hosts received the value.
 * (API answers, logs, audit lines and state files: serve-secrets.test.ts.)
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { resolveServerConfig } from "../../../src/server/config/index.js";
import type { RunningServer } from "../../../src/server/server.js";
import { hashKey } from "../../../src/server/tenancy/auth.js";
import { describeEngine } from "../../helpers/engine.js";
import { removeTenant, startTestServer, testQuotas } from "../../helpers/server-fixture.js";
import { FETCH_PY, leaksOf, receivedHeaders, testSecretValue } from "./leak-search.js";
import { type EgressTestbed, startEgressTestbed } from "./testbed.js";

const tenant = `test-secret-leaks-serve-${process.pid}`;
const KEY = "secret-leaks-serve-key";
const VALUE = testSecretValue("Serve");

describeEngine("warden serve: the value is in no approval and no metric", () => {
  let bed: EgressTestbed;
  let server: RunningServer;
  let dir: string;
  /** Every answer body of /v1/approvals and of the tool-call route, in order. */
  const approvalTexts: string[] = [];
  const callTexts: string[] = [];
  const call = (path: string, init: RequestInit = {}) =>
    fetch(`${server.url}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", ...init.headers },
    });

  /**
   * Runs one bash call in `session` (streamed when `stream`), answering allow-once to every
   * approval it waits on; resolves the route's answer text. The test's timeout bounds the polling.
   */
  const bashApproving = async (session: string, command: string, stream = false): Promise<string> => {
    let done = false;
    const answer = call(`/v1/sessions/${session}/tool-calls`, {
      method: "POST",
      headers: stream ? { accept: "text/event-stream" } : {},
      body: JSON.stringify({ toolCalls: [{ id: "c", name: "bash", arguments: { command } }] }),
    })
      .then((res) => res.text())
      .finally(() => {
        done = true;
      });
    const answered = new Set<string>();
    while (!done) {
      const text = await (await call("/v1/approvals")).text();
      approvalTexts.push(text);
      for (const { id } of (JSON.parse(text) as { approvals: { id: string }[] }).approvals) {
        if (answered.has(id)) continue;
        answered.add(id);
        const res = await call(`/v1/approvals/${id}`, {
          method: "POST",
          body: JSON.stringify({ decision: "allow-once" }),
        });
        expect(res.status).toBe(200);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    const text = await answer;
    callTexts.push(text);
    return text;
  };

  beforeAll(async () => {
    bed = await startEgressTestbed();
    dir = await mkdtemp(join(tmpdir(), "warden-secret-leaks-serve-"));
    await writeFile(join(dir, "secrets.key"), randomBytes(32).toString("base64"), { mode: 0o600 });
    const policy = join(dir, "ask-bash.yaml");
    await writeFile(
      policy,
      ["default: allow", "rules:", "  - id: ask-bash", "    decision: ask", "    tools: [bash]", ""].join(
        "\n",
      ),
    );
    const config = resolveServerConfig(
      {
        port: 0,
        stateDir: "state",
        warmPool: { size: 0 },
        secrets: { keyFile: "secrets.key" },
        tenants: [
          {
            id: tenant,
            keys: [{ id: "k", sha256: hashKey(KEY) }],
            quotas: testQuotas(2),
            policy: [policy],
            network: {
              allow: ["allowed.test:443", "other.test:443"],
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
  }, 120_000);

  afterAll(async () => {
    await server?.shutdown(0);
    await removeTenant(tenant);
    await bed?.dispose();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("holds the placeholder in the pending approvals, and the value in no approval, event or metric", async () => {
    const put = await call("/v1/secrets/GITHUB_TOKEN", {
      method: "PUT",
      body: JSON.stringify({ value: VALUE, bindings: [{ hosts: ["allowed.test", "ask.test"] }] }),
    });
    expect(put.status).toBe(201);
    const created = await call("/v1/sessions", {
      method: "POST",
      body: JSON.stringify({
        network: { allow: ["allowed.test:443", "other.test:443", "ask.test:443"] },
        secrets: [{ name: "GITHUB_TOKEN" }],
      }),
    });
    expect(created.status).toBe(201);
    const session = ((await created.json()) as { id: string }).id;
    const upload = await call(`/v1/sessions/${session}/files?path=fetch.py`, {
      method: "PUT",
      headers: { "content-type": "application/octet-stream" },
      body: FETCH_PY,
    });
    expect(upload.status).toBe(200);

    // A command holding the placeholder itself, asked and streamed; the bound host under the
    // network ask rule (two approvals: the call, then the connection); an unbound host (a 403).
    const streamed = await bashApproving(
      session,
      "python3 fetch.py https://allowed.test/hello 'Authorization=Bearer {{GITHUB_TOKEN}}'",
      true,
    );
    expect(streamed).toContain("event: approval_requested");
    expect(streamed).toContain("OK 200");
    expect(await bashApproving(session, "python3 fetch.py https://ask.test/hello")).toContain("OK 200");
    expect(await bashApproving(session, "python3 fetch.py https://other.test/hello")).toContain("ERR 403");
    expect(await receivedHeaders(bed, "/hello")).toEqual([`Bearer ${VALUE}`, `Bearer ${VALUE}`]);

    // What the approver saw: the call's command with the placeholder, and the connection to ask.test.
    const pending = approvalTexts.flatMap(
      (t) => (JSON.parse(t) as { approvals: { tool: string; args: Record<string, unknown> }[] }).approvals,
    );
    expect(pending).toContainEqual(
      expect.objectContaining({
        tool: "bash",
        args: {
          command: "python3 fetch.py https://allowed.test/hello 'Authorization=Bearer {{GITHUB_TOKEN}}'",
        },
      }),
    );
    expect(pending).toContainEqual(
      expect.objectContaining({ tool: "network", args: { host: "ask.test", port: 443 } }),
    );
    const metrics = await (await call("/metrics")).text();
    expect(metrics).toContain(`warden_egress_connections_total{tenant="${tenant}",decision="ask→allow"} 1`);
    expect(
      leaksOf(VALUE, {
        approvals: approvalTexts.join("\n"),
        "tool-call answers and events": callTexts.join("\n"),
        metrics,
      }),
    ).toEqual([]);
    await call(`/v1/sessions/${session}`, { method: "DELETE" });
  }, 180_000);
});
