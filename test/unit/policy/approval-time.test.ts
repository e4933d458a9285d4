/**
 * The time a person takes to answer an `ask` is not the tool's (a new user's trial: a call approved
 * after a minute showed as taking a minute). The policy hook reports the wait on the call's
 * decision (CallDecision.approvalMs); the terminal status line and the server's audit line and
 * latency metric take it out of the call's duration and show it apart. The clock is vitest's fake
 * `performance`, so the figures are exact.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { statusLine } from "../../../src/agent/render/format-result.js";
import type { BeforeToolCallContext, CallDecision } from "../../../src/pipeline/types.js";
import { type ApprovalProvider, createPolicyHook, parsePolicyText } from "../../../src/policy/index.js";
import { createMemoryAuditLog } from "../../../src/server/audit.js";
import { createServerMetrics } from "../../../src/server/metrics.js";
import { recordFinishedCall } from "../../../src/server/sessions/tool-audit.js";
import type { AnyTool, ToolResultMessage } from "../../../src/tools/types.js";
import { FakeSandbox } from "../../helpers/fake-sandbox.js";

const policy = {
  layers: [
    parsePolicyText(
      "default: ask\nrules:\n  - { id: allow-ls, decision: allow, tools: [bash], commands: [ls] }\n",
      "t.yaml",
    ),
  ],
};

/** The decision the hook reports for `command`, answered by an approver that takes `answerMs`. */
async function decisionFor(command: string, answerMs: number): Promise<CallDecision | undefined> {
  let noted: CallDecision | undefined;
  const approval: ApprovalProvider = {
    async request() {
      vi.advanceTimersByTime(answerMs);
      return "allow-once";
    },
  };
  const hook = createPolicyHook({ policy, sessionId: "s1", approval });
  const ctx: BeforeToolCallContext = {
    call: { id: "c1", name: "bash", arguments: { command } },
    tool: { name: "bash" } as AnyTool,
    args: { command },
    sandbox: new FakeSandbox(),
    sessionId: "s1",
    noteDecision: (d) => {
      noted = d;
    },
  };
  await hook(ctx);
  return noted;
}

describe("approval wait is reported apart from the call's time", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["performance"] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("the hook reports how long the approver took, and nothing when nobody was asked", async () => {
    expect(await decisionFor("rm notes.txt", 4100)).toEqual({
      decision: "allow",
      rule: "default",
      decider: "user",
      approvalMs: 4100,
    });
    expect(await decisionFor("ls", 4100)).toEqual({ decision: "allow", rule: "allow-ls", decider: "policy" });
  });

  it("the status line shows the tool's own time and the wait apart", () => {
    const result = {
      toolCallId: "c1",
      toolName: "bash",
      content: [],
      isError: false,
    } as unknown as ToolResultMessage;
    expect(statusLine(result, 4112, 4100)).toContain("✓ ok (12 ms, 4100 ms waiting for approval)");
    expect(statusLine(result, 12)).toContain("✓ ok (12 ms)");
  });

  it("the server's audit line and latency metric leave the wait out", async () => {
    const audit = createMemoryAuditLog();
    const metrics = createServerMetrics();
    const result = {
      role: "toolResult",
      toolCallId: "c1",
      toolName: "bash",
      content: [{ type: "text", text: "ok" }],
      isError: false,
    } as unknown as ToolResultMessage;
    recordFinishedCall(
      { audit, metrics },
      { tenant: "acme", session: "s1", batch: "b1" },
      {
        type: "tool_execution_end",
        toolCallId: "c1",
        toolName: "bash",
        result,
        decision: { decision: "allow", rule: "ask-rm", decider: "user", approvalMs: 4100 },
      },
      4112,
    );
    expect(audit.entries).toEqual([
      expect.objectContaining({ kind: "tool", durationMs: 12, approvalMs: 4100, decider: "user" }),
    ]);
    const latency = await metrics.registry.getSingleMetricAsString("warden_tool_call_duration_seconds");
    expect(latency).toContain('warden_tool_call_duration_seconds_sum{tool="bash"} 0.012');
  });
});
