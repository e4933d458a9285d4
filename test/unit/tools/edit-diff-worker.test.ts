/** buildEditDiff of large inputs: built in the worker pool, the same texts as built inline. */
import { formatPatch } from "diff";
import { describe, expect, it, vi } from "vitest";
import {
  buildEditDiff,
  DIFF_CONTEXT_LINES,
  editDiffPool,
  formatEditDiff,
} from "../../../src/tools/edit-diff.js";
import { diffLineHunks, INLINE_DIFF_MAX_CHARS } from "../../../src/util/line-diff.js";

const numbered = (n: number, word: string) =>
  Array.from({ length: n }, (_, i) => `${word} line ${i} of the file\n`).join("");

/** What buildEditDiff gave before it used a worker: the hunks, then the texts on this thread. */
async function inline(path: string, old: string, neu: string) {
  const hunks = await diffLineHunks(old, neu, { context: DIFF_CONTEXT_LINES });
  return formatEditDiff(path, old, neu, hunks, formatPatch);
}

describe("buildEditDiff in the worker pool", () => {
  it("gives the inline texts for a small change in a large file (a minimal diff)", async () => {
    const old = numbered(5000, "a");
    expect(old.length).toBeGreaterThan(INLINE_DIFF_MAX_CHARS);
    const neu = old.replace("a line 2500 ", "changed ").replace("a line 10 of the file\n", "");
    const built = await buildEditDiff("dir/f.txt", old, neu);
    expect(built).toEqual(await inline("dir/f.txt", old, neu));
    expect(built.firstChangedLine).toBe(11);
    expect(built.diff.split("\n").filter((l) => l.startsWith("-"))).toHaveLength(2);
  });

  it("gives the inline texts for a 12,000-line rewrite (one replacement hunk), without final newline", async () => {
    const old = `${numbered(12_000, "old")}end`;
    const neu = `${numbered(12_000, "new")}end`;
    const built = await buildEditDiff("f.txt", old, neu);
    expect(built).toEqual(await inline("f.txt", old, neu));
    expect(built.diff.split("\n")).toHaveLength(24_001);
  });

  it("hands a 12,000-line rewrite whole to the pool and returns its texts as they are (issue 11)", async () => {
    // Formatting these two ~700 KB texts on the event loop (as before) took ~12 ms of its CPU per
    // edit. A stand-in pool result comes back untouched: neither the diff nor a text is built here.
    const old = numbered(12_000, "old");
    const neu = numbered(12_000, "new");
    const answer = { diff: "from the worker", patch: "from the worker", firstChangedLine: 1 };
    const run = vi.spyOn(editDiffPool(), "run").mockResolvedValue(answer);
    try {
      expect(await buildEditDiff("f.txt", old, neu)).toBe(answer);
      expect(run).toHaveBeenCalledTimes(1);
      expect(run.mock.calls[0]?.[0]).toMatchObject({ path: "f.txt", diff: { oldText: old, newText: neu } });
    } finally {
      run.mockRestore();
    }
  });
});
