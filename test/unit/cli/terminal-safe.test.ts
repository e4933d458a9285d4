/**
 * Strings a model or client made (a recorded assistant text, a tool name, a tool-call id) reach the
 * operator's terminal in `warden replay`; escape sequences in them (OSC 52 writes the clipboard,
 * others clear the screen or hide lines) are shown escaped, never sent to the terminal.
 */
import { describe, expect, it } from "vitest";
import { callHeader, resultStatus, turnHeader } from "../../../src/agent/render/format-result.js";
import type { ToolResultMessage } from "../../../src/tools/types.js";

// picocolors' own colours (SGR) are fine; anything else from the input must not reach the terminal raw.
const plain = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, "");
const evil = "hi\x1b]52;c;aGk=\x07\x1b[8m";

describe("replay output is terminal-safe", () => {
  it("escapes control characters in the turn's text, the tool name and the tool-call id", () => {
    expect(plain(turnHeader(2, 5, evil))).toBe("\n── turn 2 (line 5): hi\\x1b]52;c;aGk=\\x07\\x1b[8m");
    expect(plain(callHeader(1, { id: "c", name: evil, arguments: {} }))).toBe(
      "▶ [1] hi\\x1b]52;c;aGk=\\x07\\x1b[8m {}",
    );
    const result = { toolCallId: evil, isError: false } as ToolResultMessage;
    expect(plain(resultStatus(result, 3))).toBe("✓ ok (3 ms) hi\\x1b]52;c;aGk=\\x07\\x1b[8m");
  });
});
