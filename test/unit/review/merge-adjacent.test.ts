import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { mergeFile } from "../../../src/review/merge.js";

// git merge-file, which mergeFile runs, keeps both sides' changes only when an unchanged line
// separates them: changes on adjacent lines conflict. The reason says so, so that a user whose
// edit sits next to the session's is not told they changed "the same lines".
const base = Buffer.from("a\nb\nc\nd\n");
const session = Buffer.from("a\nB\nc\nd\n");

function hostWith(text: string): string {
  const root = mkdtempSync(join(tmpdir(), "warden-merge-"));
  writeFileSync(join(root, "f.txt"), text);
  return root;
}

describe("three-way merge of adjacent changes", () => {
  it("a host change on the line next to the session's conflicts, and the reason says adjacent", async () => {
    const outcome = await mergeFile(hostWith("a\nb\nC\nd\n"), { path: "f.txt", base, theirs: session });
    expect(outcome).toEqual({
      path: "f.txt",
      kind: "conflict",
      reason:
        "1 conflicting hunk: the host and the session changed the same or adjacent lines (a three-way merge, as git's, keeps only changes with an unchanged line between them)",
    });
  });

  it("with one unchanged line between them, both changes are kept", async () => {
    const outcome = await mergeFile(hostWith("a\nb\nc\nD\n"), { path: "f.txt", base, theirs: session });
    expect(outcome).toEqual({
      path: "f.txt",
      kind: "write",
      bytes: Buffer.from("a\nB\nc\nD\n"),
      merged: true,
    });
  });
});
