/**
 * What travels with a call: the decision a beforeToolCall hook reports reaches that call's
 * afterToolCall hooks and end event (not a map keyed by the client's id); a batch whose ids repeat is
 * refused whole.
 */
import { describe, expect, it } from "vitest";
import { runToolCalls } from "../../../src/pipeline/index.js";
import type { CallDecision, ToolExecutionEvent } from "../../../src/pipeline/types.js";
import type { AnyTool } from "../../../src/tools/types.js";
import { contextWith, echoTool } from "../../helpers/pipeline-fakes.js";

describe("per-call record", () => {
  it("carries each call's reported decision to its afterToolCall hook and its end event", async () => {
    const seenAfter: [string, CallDecision | undefined][] = [];
    const events: ToolExecutionEvent[] = [];
    const ctx = contextWith([echoTool()], {
      beforeToolCall: [
        async ({ args, noteDecision }) => {
          const text = (args as { text: string }).text;
          if (text === "quiet") return undefined;
          if (text === "rm") {
            noteDecision?.({ decision: "deny", rule: "deny-rm", decider: "policy" });
            return { block: true, reason: "rm is denied" };
          }
          noteDecision?.({ decision: "allow", rule: `allow-${text}`, decider: "policy" });
          return undefined;
        },
      ],
      afterToolCall: [
        async ({ call, decision }) => {
          seenAfter.push([call.id, decision]);
          return undefined;
        },
      ],
    });
    const results = await runToolCalls(
      [
        { id: "a", name: "echo", arguments: { text: "ls" } },
        { id: "b", name: "echo", arguments: { text: "rm" } },
        { id: "c", name: "echo", arguments: { text: "quiet" } },
        { id: "d", name: "echo", arguments: { text: "cat" } },
      ],
      ctx,
      { onEvent: (e) => events.push(e) },
    );
    expect(results.map((r) => [r.toolCallId, r.isError])).toEqual([
      ["a", false],
      ["b", true],
      ["c", false],
      ["d", false],
    ]);
    const ends = events.filter((e) => e.type === "tool_execution_end");
    const byId = Object.fromEntries(ends.map((e) => [e.toolCallId, "decision" in e ? e.decision : "absent"]));
    expect(byId).toEqual({
      a: { decision: "allow", rule: "allow-ls", decider: "policy" },
      b: { decision: "deny", rule: "deny-rm", decider: "policy" },
      c: "absent",
      d: { decision: "allow", rule: "allow-cat", decider: "policy" },
    });
    expect(seenAfter.sort()).toEqual([
      ["a", { decision: "allow", rule: "allow-ls", decider: "policy" }],
      ["c", undefined],
      ["d", { decision: "allow", rule: "allow-cat", decider: "policy" }],
    ]);
  });
});

describe("repeated tool-call ids", () => {
  it("refuses the whole batch: every call gets the error naming the id, nothing runs, no hook is asked", async () => {
    const ran: string[] = [];
    const asked: string[] = [];
    const tool: AnyTool = echoTool({
      execute: async (id: string) => {
        ran.push(id);
        return { content: [{ type: "text", text: "ran" }] };
      },
    });
    const events: ToolExecutionEvent[] = [];
    const ctx = contextWith([tool], {
      beforeToolCall: [
        async ({ call }) => {
          asked.push(call.id);
          return undefined;
        },
      ],
    });
    const results = await runToolCalls(
      [
        { id: "call_0", name: "echo", arguments: { text: "a" } },
        { id: "call_1", name: "echo", arguments: { text: "b" } },
        { id: "call_0", name: "missing", arguments: {} },
      ],
      ctx,
      { onEvent: (e) => events.push(e) },
    );
    const text =
      "Tool call id 'call_0' appears more than once in this batch; every call of a batch needs its own id. " +
      "No call of the batch was run: re-issue the calls with distinct ids.";
    const details = { stage: "batch", code: "INVALID_ARGUMENT", duplicateToolCallIds: ["call_0"] };
    expect(results.map((r) => [r.toolCallId, r.toolName, r.isError, r.content, r.details])).toEqual([
      ["call_0", "echo", true, [{ type: "text", text }], details],
      ["call_1", "echo", true, [{ type: "text", text }], details],
      ["call_0", "missing", true, [{ type: "text", text }], details],
    ]);
    expect(ran).toEqual([]);
    expect(asked).toEqual([]);
    expect(events.map((e) => `${e.type} ${e.toolCallId}`)).toEqual([
      "tool_execution_start call_0",
      "tool_execution_end call_0",
      "tool_execution_start call_1",
      "tool_execution_end call_1",
      "tool_execution_start call_0",
      "tool_execution_end call_0",
    ]);
  });

  it("names every repeated id once", async () => {
    const call = (id: string) => ({ id, name: "echo", arguments: { text: id } });
    const results = await runToolCalls(
      [call("x"), call("y"), call("x"), call("y"), call("x")],
      contextWith([echoTool()]),
    );
    expect(results[0]?.content).toEqual([
      {
        type: "text",
        text:
          "Tool call ids 'x', 'y' appear more than once in this batch; every call of a batch needs its own id. " +
          "No call of the batch was run: re-issue the calls with distinct ids.",
      },
    ]);
  });
});
