/** The live view: plain lines without a TTY, spinner and colours with one; --json as JSONL. */
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { JsonView } from "../../../src/agent/render/json-view.js";
import { TerminalView } from "../../../src/agent/render/terminal-view.js";
import type { AgentEvent } from "../../../src/agent/types.js";
import type { ToolResultMessage } from "../../../src/tools/types.js";

function sink(isTTY: boolean) {
  const out = Object.assign(new PassThrough(), { isTTY, columns: 80 });
  const chunks: string[] = [];
  out.on("data", (c: Buffer) => chunks.push(c.toString()));
  return { out, text: () => chunks.join("") };
}

const result = (
  id: string,
  name: string,
  text: string,
  extra: Partial<ToolResultMessage> = {},
): ToolResultMessage => ({
  role: "toolResult",
  toolCallId: id,
  toolName: name,
  content: [{ type: "text", text }],
  isError: false,
  timestamp: 0,
  ...extra,
});

const events: AgentEvent[] = [
  { type: "turn_start", turn: 1 },
  { type: "text_delta", text: "Fixing " },
  { type: "text_delta", text: "it." },
  { type: "assistant_message", turn: 1, content: "Fixing it.", toolCalls: [], finishReason: "tool_calls" },
  { type: "tool_execution_start", toolCallId: "b", toolName: "bash", args: { command: "npm test" } },
  {
    type: "tool_execution_update",
    toolCallId: "b",
    toolName: "bash",
    partial: { content: [{ type: "text", text: "1 passing" }] },
  },
  {
    type: "tool_execution_end",
    toolCallId: "b",
    toolName: "bash",
    result: result("b", "bash", "ok 1\nok 2\n"),
  },
  { type: "tool_execution_start", toolCallId: "e", toolName: "edit", args: { path: "a.ts" } },
  {
    type: "tool_execution_end",
    toolCallId: "e",
    toolName: "edit",
    result: result("e", "edit", "Successfully replaced 1 block", { details: { diff: "-1 old\n+1 new" } }),
  },
  { type: "agent_end", stopReason: "final", turns: 1, finalText: "Fixing it." },
];

describe("terminal view", () => {
  it("prints plain lines without control sequences when stdout is not a TTY", () => {
    const { out, text } = sink(false);
    const view = new TerminalView({ out });
    for (const e of events) view.handle(e);
    view.stop();
    expect(text().replace(/\(\d+\.\ds\)/g, "(T)")).toBe(
      [
        "Fixing it.",
        "▸ bash: npm test",
        "✓ bash: npm test (T)",
        "    ok 1",
        "    ok 2",
        "▸ edit: a.ts",
        "✓ edit: a.ts (T)",
        "    -1 old",
        "    +1 new",
        "",
      ].join("\n"),
    );
  });

  it("draws a spinner with the live output tail on a TTY, and colours the diff", () => {
    const { out, text } = sink(true);
    const view = new TerminalView({ out, colour: true });
    for (const e of events) view.handle(e);
    view.stop();
    const t = text();
    expect(t).toContain("\r\x1b[2K⠙ bash: npm test");
    expect(t).toContain("│ 1 passing");
    expect(t).toContain("\x1b[32m+1 new\x1b[39m");
    expect(t).toContain("\x1b[31m-1 old\x1b[39m");
    expect(t).toContain("waiting for the model…");
  });

  it("--json writes one event per line", () => {
    const { out, text } = sink(false);
    const view = new JsonView(out);
    for (const e of events.slice(0, 3)) view.handle(e);
    expect(
      text()
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l)),
    ).toEqual(events.slice(0, 3));
  });
});
