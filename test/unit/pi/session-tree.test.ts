import { describe, expect, it } from "vitest";
import { sessionBashCommands, sessionCorpus } from "../../pi/corpus-session.js";
import { type RecordedCall, sessionTree } from "../../pi/session-tree.js";

const read = (path: string, resultText: string, extra: Record<string, unknown> = {}): RecordedCall => ({
  name: "read",
  arguments: { path, ...extra },
  resultText,
  isError: false,
});
const bash = (command: string, resultText: string): RecordedCall => ({
  name: "bash",
  arguments: { command },
  resultText,
  isError: false,
});

describe("sessionTree: the recorded session's starting tree, from its own results", () => {
  it("a whole read is the file exactly; a later read of the changed file is not used", () => {
    const tree = sessionTree([
      read("pkg/a.ts", "one\ntwo\n"),
      { name: "edit", arguments: { path: "pkg/a.ts", oldText: "two", newText: "2" } },
      read("pkg/a.ts", "one\n2\n"),
      read("/workspace/NOTES.md", "no final newline"),
    ]);
    expect(Object.fromEntries(tree)).toEqual({ "NOTES.md": "no final newline", "pkg/a.ts": "one\ntwo\n" });
  });

  it("partial reads place their lines at their numbers; the notice gives the line count (Pi 0.7 and 0.73)", () => {
    const tree = sessionTree([
      read("pkg/b.ts", "line2\nline3\n\n... (3 more lines not shown. Use offset=4 to continue reading)", {
        offset: 2,
        limit: 2,
      }),
      read("pkg/c.ts", "c1\n\n[Showing lines 1-1 of 3. Use offset=2 to continue.]", { limit: 1 }),
    ]);
    // b: 3 shown up to line 3, 3 more in Pi's count (which counts the empty string after the final newline).
    expect(tree.get("pkg/b.ts")).toBe("\nline2\nline3\n\n\n");
    expect(tree.get("pkg/c.ts")).toBe("c1\n\n");
  });

  it("a first edit's numbered diff gives the old lines; a later edit's diff is not used", () => {
    const tree = sessionTree([
      {
        name: "edit",
        arguments: { path: "pkg/d.ts", oldText: "b", newText: "B" },
        isError: false,
        diff: "   1 a\n-  2 b\n+  2 B\n   3 c",
      },
      {
        name: "edit",
        arguments: { path: "pkg/d.ts", oldText: "c", newText: "C" },
        isError: false,
        diff: "   2 B\n-  3 c\n+  3 C\n   4 x",
      },
    ]);
    expect(tree.get("pkg/d.ts")).toBe("a\nb\nc");
  });

  it("files only named by bash are empty; missing ones, files the session wrote, and other roots are left out", () => {
    const tree = sessionTree([
      read("pkg/e.ts", "e\n"),
      bash("find pkg -name '*.ts'", "pkg/e.ts\npkg/sub/f.ts\n"),
      bash("grep -n x pkg/gone.ts", "grep: pkg/gone.ts: No such file or directory\n"),
      bash("cd pkg && tsc", "src/g.ts(1,1): error\n"),
      { name: "write", arguments: { path: "pkg/new.ts", content: "n" }, isError: false },
      read("pkg/new.ts", "n"),
      read("~/.config/h.json", "{}"),
    ]);
    expect(Object.fromEntries(tree)).toEqual({ "pkg/e.ts": "e\n", "pkg/sub/f.ts": "" });
  });

  it("a bash command that writes a named file ends what is learnt of it", () => {
    const tree = sessionTree([
      read("pkg/i.ts", "x\n\n... (1 more lines not shown. Use offset=2 to continue reading)", { limit: 1 }),
      bash("sed -i '' 's/x/y/' pkg/i.ts", "(no output)"),
      read("pkg/i.ts", "y\nz\n"),
    ]);
    expect(tree.get("pkg/i.ts")).toBe("x\n");
  });
});

it("a missing recorded session fails with its path and why it is not in the repository (never a silent skip)", () => {
  const missing =
    "the recorded Pi session is missing: /nonexistent/beside/fixtures/pi-large-session.jsonl (a copy of shared/ must sit beside the repository; it is another project's recorded work, so it is never committed here: see AGENTS.md, npm run test:pi)";
  expect(() => sessionCorpus("/nonexistent/beside/fixtures/pi-large-session.jsonl")).toThrow(missing);
  expect(() => sessionBashCommands("/nonexistent/beside/fixtures/pi-large-session.jsonl")).toThrow(missing);
});
