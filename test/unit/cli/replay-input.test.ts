/** `warden replay` refuses input with nothing to replay instead of "0 turns", and takes a {"messages"} export. */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { asJsonl, runReplay } from "../../../src/cli/commands/replay.js";
import { parseReplayTurns } from "../../../src/session/replay-turns.js";

const file = (name: string, text: string) => {
  const path = join(mkdtempSync(join(tmpdir(), "warden-replay-in-")), name);
  writeFileSync(path, text);
  return path;
};
const call = { id: "c1", type: "function", function: { name: "ls", arguments: "{}" } };

describe("warden replay input", () => {
  it("an empty file is an error naming it (exit 2), not 0 turns", async () => {
    const path = file("empty.jsonl", "\n");
    await expect(runReplay(path, {})).rejects.toThrow(`Transcript '${path}' is empty: nothing to replay.`);
  });

  it("a file without assistant tool calls is an error saying what is expected", async () => {
    const path = file("chat.jsonl", '{"role":"user","content":"hi"}\n');
    await expect(runReplay(path, {})).rejects.toThrow(
      `Transcript '${path}' has no assistant message with tool_calls: nothing to replay (one JSON message per line, or {"messages": [...]}).`,
    );
  });

  it('a {"messages": [...]} export (pretty-printed too) is read as its messages', () => {
    const text = JSON.stringify(
      {
        messages: [
          { role: "user", content: "x" },
          { role: "assistant", tool_calls: [call] },
        ],
      },
      null,
      2,
    );
    const turns = parseReplayTurns(asJsonl(text));
    expect(turns.map((t) => t.calls.map((c) => c.name))).toEqual([["ls"]]);
  });
});
