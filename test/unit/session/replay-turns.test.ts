import { describe, expect, it } from "vitest";
import { parseRunTranscript } from "../../../src/agent/transcript.js";
import { InvalidArgumentError } from "../../../src/errors.js";
import {
  parseReplayTurns,
  resolvePlaceholders,
  spillPathOf,
  toToolCall,
} from "../../../src/session/index.js";

const turn = (calls: unknown[], content = "") =>
  JSON.stringify({ role: "assistant", content, tool_calls: calls });
const fn = (id: string, name: string, args: string) => ({
  id,
  type: "function",
  function: { name, arguments: args },
});

describe("parseReplayTurns", () => {
  it("keeps assistant turns with tool calls and skips every other line", () => {
    const text = [
      JSON.stringify({ role: "user", content: "hello" }),
      turn([fn("c1", "ls", "{}"), fn("c2", "read", '{"path":"a"}')], "Looking."),
      JSON.stringify({ role: "tool", tool_call_id: "c1", content: "a" }),
      JSON.stringify({ role: "assistant", content: "done" }),
      "",
      turn([fn("c3", "bash", '{"command":"ls"}')]),
    ].join("\n");
    expect(parseReplayTurns(text)).toEqual([
      {
        line: 2,
        content: "Looking.",
        calls: [
          { id: "c1", name: "ls", argumentsText: "{}" },
          { id: "c2", name: "read", argumentsText: '{"path":"a"}' },
        ],
      },
      { line: 6, calls: [{ id: "c3", name: "bash", argumentsText: '{"command":"ls"}' }] },
    ]);
  });

  it("names the line that is not JSON", () => {
    expect(() => parseReplayTurns(`${turn([fn("c1", "ls", "{}")])}\n{oops`)).toThrow(
      new InvalidArgumentError(
        `Transcript line 2 is not valid JSON (Expected property name or '}' in JSON at position 1); fix or remove it.`,
      ),
    );
  });

  it("a run transcript is read by the same parser: the bad line is named with its file", () => {
    const text = `${JSON.stringify({ role: "user", content: "hi" })}\r\n\n{oops\n`;
    expect(() => parseRunTranscript(text, "r.jsonl")).toThrow(
      new InvalidArgumentError(
        `Transcript line 3 of r.jsonl is not valid JSON (Expected property name or '}' in JSON at position 1); fix or remove it.`,
      ),
    );
  });
});

describe("toToolCall", () => {
  it("parses JSON arguments, maps an empty string to {}, keeps a non-JSON string as is", () => {
    expect(toToolCall({ id: "1", name: "ls", argumentsText: '{"path":"src"}' }).arguments).toEqual({
      path: "src",
    });
    expect(toToolCall({ id: "1", name: "ls", argumentsText: "" }).arguments).toEqual({});
    expect(toToolCall({ id: "1", name: "ls", argumentsText: "{path:" }).arguments).toBe("{path:");
  });
});

describe("resolvePlaceholders", () => {
  it("replaces {{spill:<id>}} with the JSON-escaped path and reports unknown ids", () => {
    const lookup = (id: string) => (id === "c7" ? '/tmp/warden "spill"/bash-1.log' : undefined);
    expect(resolvePlaceholders('{"path":"{{spill:c7}}","x":"{{spill:c9}}"}', lookup)).toEqual({
      text: '{"path":"/tmp/warden \\"spill\\"/bash-1.log","x":"{{spill:c9}}"}',
      missing: ["c9"],
    });
  });
});

describe("spillPathOf", () => {
  it("finds fullOutputPath at any depth of a result's details", () => {
    const base = {
      role: "toolResult" as const,
      toolCallId: "c",
      toolName: "bash",
      content: [],
      isError: false,
      timestamp: 0,
    };
    expect(
      spillPathOf({ ...base, details: { truncation: { truncated: true }, fullOutputPath: "/s/a.log" } }),
    ).toBe("/s/a.log");
    expect(spillPathOf({ ...base, details: { spill: { spillPath: "/s/b.log" } } })).toBe("/s/b.log");
    expect(spillPathOf({ ...base, details: { exitCode: 0 } })).toBeUndefined();
  });
});
