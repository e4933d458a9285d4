import { describe, expect, it } from "vitest";
import type { WardenError } from "../../../src/errors.js";
import { createEditTool } from "../../../src/tools/edit.js";
import { prepareEditArguments } from "../../../src/tools/edit-arguments.js";
import { buildEditDiff } from "../../../src/tools/edit-diff.js";
import type { SpillStore } from "../../../src/tools/types.js";
import { FakeSandbox } from "../../helpers/fake-sandbox.js";

const spill = {} as SpillStore;

async function edit(sandbox: FakeSandbox, path: string, ...edits: [string, string][]) {
  const tool = createEditTool();
  const args = { path, edits: edits.map(([oldText, newText]) => ({ oldText, newText })) };
  return tool.execute("call-1", args, { sandbox, spill });
}

async function editError(
  sandbox: FakeSandbox,
  path: string,
  ...edits: [string, string][]
): Promise<WardenError> {
  try {
    await edit(sandbox, path, ...edits);
  } catch (err) {
    return err as WardenError;
  }
  throw new Error("expected the edit to fail");
}

describe("prepareEditArguments (earendil-works/pi#2949)", () => {
  it("moves legacy top-level oldText/newText into edits", () => {
    expect(prepareEditArguments({ path: "c.txt", oldText: "a", newText: "b" })).toEqual({
      path: "c.txt",
      edits: [{ oldText: "a", newText: "b" }],
    });
  });

  it("parses a JSON-string edits array or object", () => {
    expect(prepareEditArguments({ path: "p", edits: '[{"oldText":"a","newText":"b"}]' })).toEqual({
      path: "p",
      edits: [{ oldText: "a", newText: "b" }],
    });
    expect(prepareEditArguments({ path: "p", edits: '{"oldText":"a","newText":"b"}' })).toEqual({
      path: "p",
      edits: [{ oldText: "a", newText: "b" }],
    });
  });

  it("appends a legacy pair to an existing edits array and leaves other shapes alone", () => {
    expect(
      prepareEditArguments({
        path: "p",
        edits: [{ oldText: "x", newText: "y" }],
        oldText: "a",
        newText: "b",
      }),
    ).toEqual({
      path: "p",
      edits: [
        { oldText: "x", newText: "y" },
        { oldText: "a", newText: "b" },
      ],
    });
    expect(prepareEditArguments({ path: "p", edits: "not json" })).toEqual({ path: "p", edits: "not json" });
    expect(prepareEditArguments("raw")).toBe("raw");
  });

  it("does not mutate its input", () => {
    const raw = { path: "p", oldText: "a", newText: "b" };
    prepareEditArguments(raw);
    expect(raw).toEqual({ path: "p", oldText: "a", newText: "b" });
  });
});

describe("edit tool (fake sandbox)", () => {
  it("case 9: CRLF bytes are exactly ALPHA\\r\\nBETA\\r\\ngamma\\r\\n", async () => {
    const sb = new FakeSandbox().file("/workspace/c.txt", "alpha\r\nbeta\r\ngamma\r\n");
    const out = await edit(sb, "c.txt", ["alpha\nbeta", "ALPHA\nBETA"]);
    expect(sb.bytes("/workspace/c.txt")?.toString("latin1")).toBe("ALPHA\r\nBETA\r\ngamma\r\n");
    expect(out.content).toEqual([{ type: "text", text: "Successfully replaced 1 block(s) in c.txt." }]);
    expect(out.details?.diff).toBe("-1 alpha\n-2 beta\n+1 ALPHA\n+2 BETA\n 3 gamma");
    expect(out.details?.firstChangedLine).toBe(1);
  });

  it("case 10: BOM and UTF-8 bytes survive", async () => {
    const sb = new FakeSandbox().file(
      "/workspace/b.txt",
      Buffer.from("\xef\xbb\xbfhello\nw\xc3\xb6rld\n", "latin1"),
    );
    await edit(sb, "b.txt", ["hello\nw", "hello2\nw"]);
    expect(sb.bytes("/workspace/b.txt")?.toString("hex")).toBe(
      Buffer.from("\xef\xbb\xbfhello2\nw\xc3\xb6rld\n", "latin1").toString("hex"),
    );
  });

  it("case 12: spaces into a tab-indented file fail with the tabs hint and write nothing", async () => {
    const sb = new FakeSandbox().file("/workspace/t.go", "f() {\n\treturn 1\n}\n");
    const err = await editError(sb, "t.go", ["    return 1", "    return 2"]);
    expect(err.code).toBe("INVALID_ARGUMENT");
    expect(err.message).toBe(
      "Could not find the exact text in t.go. The old text must match exactly including all whitespace and newlines. " +
        "The text appears at line 2 with different indentation: the file indents with tabs, but your oldText " +
        "uses spaces. Use tab characters in oldText and newText. Read the file again with the read tool and " +
        "copy oldText exactly from it (indentation, blank lines and punctuation included), or use a shorter " +
        "oldText that is unique.",
    );
    expect(sb.writes).toBe(0);
    await edit(sb, "t.go", ["\treturn 1", "\treturn 2"]);
    expect(sb.bytes("/workspace/t.go")?.toString()).toBe("f() {\n\treturn 2\n}\n");
  });

  it("words ambiguity, overlap, no-change and multi-edit success", async () => {
    const sb = new FakeSandbox().file("/workspace/d.txt", "x\nx\ny\n");
    expect((await editError(sb, "d.txt", ["x", "z"])).message).toBe(
      "Found 2 occurrences of the text in d.txt. The text must be unique. Please provide more context to make it unique.",
    );
    expect((await editError(sb, "d.txt", ["x\ny", "a"], ["y\n", "b"])).message).toBe(
      "edits[0] and edits[1] overlap in d.txt. Merge them into one edit, or make their oldText regions disjoint.",
    );
    expect((await editError(sb, "d.txt", ["y", "y"])).message).toBe(
      "No changes made to d.txt. The replacement produced identical content.",
    );
    const out = await edit(sb, "d.txt", ["x\nx", "x\nw"], ["y", "Y"]);
    expect(out.content).toEqual([{ type: "text", text: "Successfully replaced 2 block(s) in d.txt." }]);
    expect(sb.bytes("/workspace/d.txt")?.toString()).toBe("x\nw\nY\n");
  });

  it("refuses a missing file, a non-UTF-8 file and a symlink leading outside", async () => {
    const sb = new FakeSandbox()
      .file("/workspace/bin.dat", Buffer.from([0x61, 0xff, 0x62]))
      .file("/etc/passwd", "root:x:0:0\n")
      .symlink("/workspace/leak", "/etc/passwd");
    expect((await editError(sb, "nope.txt", ["a", "b"])).message).toBe("File not found: nope.txt");
    expect((await editError(sb, "bin.dat", ["a", "b"])).message).toBe(
      "bin.dat is not valid UTF-8 text; edit refuses to rewrite it because bytes would be lost. " +
        "Use bash for binary or non-UTF-8 files.",
    );
    const leak = await editError(sb, "leak", ["root", "toor"]);
    expect(leak.code).toBe("PATH_OUTSIDE_WORKSPACE");
    expect(leak.message).toContain("'/etc/passwd'");
    expect(sb.bytes("/etc/passwd")?.toString()).toBe("root:x:0:0\n");
  });

  it("edits a symlink's target inside the workspace, keeping the link", async () => {
    const sb = new FakeSandbox().file("/workspace/real.txt", "a\n").symlink("/workspace/link", "real.txt");
    await edit(sb, "link", ["a", "b"]);
    expect(sb.bytes("/workspace/real.txt")?.toString()).toBe("b\n");
    expect(sb.nodes.get("/workspace/link")).toEqual({ type: "symlink", target: "real.txt" });
  });

  it("mutatesPath returns the raw path", () => {
    expect(createEditTool().mutatesPath?.({ path: "a/../b.txt", edits: [] })).toBe("a/../b.txt");
  });
});

describe("buildEditDiff", () => {
  it("shows 4 context lines, ellipses and padded line numbers, plus a unified patch", async () => {
    const old = `${Array.from({ length: 12 }, (_, i) => `l${i + 1}`).join("\n")}\n`;
    const neu = old.replace("l6\n", "six\n");
    const d = await buildEditDiff("f.txt", old, neu);
    expect(d.diff).toBe(
      [
        "    ...",
        "  2 l2",
        "  3 l3",
        "  4 l4",
        "  5 l5",
        "- 6 l6",
        "+ 6 six",
        "  7 l7",
        "  8 l8",
        "  9 l9",
        " 10 l10",
        "    ...",
      ].join("\n"),
    );
    expect(d.firstChangedLine).toBe(6);
    expect(d.patch).toBe(
      "--- a/f.txt\n+++ b/f.txt\n@@ -2,9 +2,9 @@\n l2\n l3\n l4\n l5\n-l6\n+six\n l7\n l8\n l9\n l10\n",
    );
  });
});
