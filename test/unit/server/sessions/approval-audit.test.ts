/** Each ask answered over HTTP or abandoned is one `approval` audit line (approval-broker.ts). */
import { expect, it } from "vitest";
import type { Decision } from "../../../../src/policy/index.js";
import { createMemoryAuditLog } from "../../../../src/server/audit.js";
import { ApprovalBroker } from "../../../../src/server/sessions/approval-broker.js";
import { RunningCalls } from "../../../../src/server/sessions/running-calls.js";

const decision = { decision: "ask", trail: [] } as unknown as Decision;

it("an answered tool ask names the call, its batch, the answer and the API key; an abandoned network ask is unanswered", async () => {
  const audit = createMemoryAuditLog();
  const calls = new RunningCalls();
  const broker = new ApprovalBroker(audit, calls);
  calls.start("s1", { toolCallId: "c1", batch: "b1" }, Date.now() - 10);
  const asked = broker.provider.request({
    tool: "bash",
    args: { command: "curl x" },
    decision,
    signal: new AbortController().signal,
    toolCallId: "c1",
    sessionId: "s1",
    tenant: "alpha",
  });
  const [pending] = broker.list("alpha");
  broker.decide("alpha", pending!.id, "allow", "ops-key");
  expect(await asked).toBe("allow-once");

  const abandon = new AbortController();
  const network = broker.provider.request({
    tool: "network",
    args: { host: "a.test", port: 443 },
    decision,
    signal: abandon.signal,
    sessionId: "s1",
    tenant: "alpha",
    network: { host: "a.test", port: 443, rule: "ask a.test:443" },
  });
  abandon.abort();
  expect(await network).toBe("deny");
  expect(audit.entries).toEqual([
    {
      kind: "approval",
      tenant: "alpha",
      session: "s1",
      toolCallId: "c1",
      batch: "b1",
      tool: "bash",
      answer: "allow-once",
      waitMs: expect.any(Number),
      who: "ops-key",
    },
    {
      kind: "approval",
      tenant: "alpha",
      session: "s1",
      toolCallId: "c1",
      batch: "b1",
      tool: "network",
      answer: "deny",
      waitMs: expect.any(Number),
      who: "unanswered",
      network: { host: "a.test", port: 443, rule: "ask a.test:443" },
    },
  ]);
});
