/**
 * The opt-in `process` tool in a real session on the backend under test, under the shipped default
 * policy with an approver that records what it is asked: a start runs in the background and its
 * output pages with the offset to continue from; input to a shell process asks (and a denied ask
 * writes nothing); output, list and wait never ask; the process ends with the session.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { ApprovalAnswer, ApprovalProvider, ApprovalRequest } from "../../../src/policy/index.js";
import { createPolicyHook, loadPolicy } from "../../../src/policy/index.js";
import type { Session } from "../../../src/session/index.js";
import type { ToolResultMessage } from "../../../src/tools/index.js";
import { createTestSession, describeBackend } from "../../helpers/backend.js";

const DEFAULT_POLICY = new URL("../../../policies/default.yaml", import.meta.url).pathname;

/** Answers `allow-once` to a start and `deny` to anything else, and records each ask as `tool action`. */
class RecordingApproval implements ApprovalProvider {
  readonly asked: string[] = [];
  async request(req: ApprovalRequest): Promise<ApprovalAnswer> {
    const action = (req.args as { action?: string }).action ?? "";
    this.asked.push(`${req.tool} ${action}`.trim());
    return action === "start" ? "allow-once" : "deny";
  }
}

const text = (r: ToolResultMessage) => r.content.map((c) => (c.type === "text" ? c.text : "")).join("");

describeBackend("the process tool under the default policy", () => {
  const approval = new RecordingApproval();
  let session: Session;
  let call = 0;
  const run = async (args: Record<string, unknown>) => {
    const [result] = await session.runToolCalls([{ id: `c${++call}`, name: "process", arguments: args }]);
    if (!result) throw new Error("no result");
    return result;
  };

  beforeAll(async () => {
    const sessionId = `proc-tool-${randomUUID()}`;
    session = await createTestSession({
      sessionId,
      tenant: `test-proc-tool-${randomUUID().slice(0, 8)}`,
      toolSelection: { tools: ["bash", "process"] },
      beforeToolCall: [createPolicyHook({ policy: await loadPolicy([DEFAULT_POLICY]), approval, sessionId })],
    });
  }, 120_000);

  afterAll(async () => {
    await session?.close();
  });

  it("is enabled only by name, and starts, pages and waits without asking", async () => {
    expect(session.enabledTools).toEqual(["bash", "process"]);
    const started = await run({ action: "start", command: "seq 1 3000" });
    expect([started.isError, text(started).split("\n")[0]]).toEqual([false, expect.stringContaining("p1")]);
    const waited = await run({ action: "wait", id: "p1", timeout: 20 });
    expect(waited.isError).toBe(false);
    const first = await run({ action: "output", id: "p1" });
    expect(first.isError).toBe(false);
    expect(text(first)).toContain("Use offset=");
    const listed = await run({ action: "list" });
    expect(text(listed)).toContain("p1");
    expect(approval.asked).toEqual([]);
  });

  it("asks before input to a shell, and a denied ask writes nothing", async () => {
    const started = await run({ action: "start", command: "bash" });
    expect(started.isError).toBe(false);
    const id = /p\d+/.exec(text(started))?.[0];
    expect(approval.asked).toEqual(["process start"]);
    const input = await run({ action: "input", id, text: "echo injected > /tmp/injected\n", close: true });
    expect(input.isError).toBe(true);
    expect(approval.asked).toEqual(["process start", "process input"]);
    const check = await session.sandbox.stat("/tmp/injected");
    expect(check).toBeNull();
    const killed = await run({ action: "kill", id });
    expect(killed.isError).toBe(false);
    expect(approval.asked).toEqual(["process start", "process input"]);
  });
});
