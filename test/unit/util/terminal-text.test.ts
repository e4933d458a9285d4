import { describe, expect, it } from "vitest";
import { resultText } from "../../../src/agent/render/format-result.js";
import { terminalSafe } from "../../../src/util/terminal-text.js";

describe("terminalSafe: tool output never drives the operator's terminal", () => {
  it("shows escape sequences (OSC 52 clipboard, screen clear, title) as visible \\xNN", () => {
    const hostile = "ok \x1b]52;c;ZWNobyBwd25lZA==\x07 \x1b[2J\x1b]0;pwned-title\x07\n";
    expect(terminalSafe(hostile)).toBe(
      "ok \\x1b]52;c;ZWNobyBwd25lZA==\\x07 \\x1b[2J\\x1b]0;pwned-title\\x07\n",
    );
  });

  it("keeps tabs, newlines and CRLF; escapes a bare CR, DEL and C1 controls (U+009B CSI)", () => {
    expect(terminalSafe("a\tb\r\nc\rd\x7fe\u009b31m")).toBe("a\tb\r\nc\\x0dd\\x7fe\\x9b31m");
  });

  it("is applied to the text of results the CLI prints", () => {
    const text = resultText({
      role: "toolResult",
      toolCallId: "1",
      toolName: "read",
      content: [{ type: "text", text: "\x1b[2Jx" }],
      isError: false,
      timestamp: 0,
    });
    expect(text).toBe("\\x1b[2Jx");
  });
});
