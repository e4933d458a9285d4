/** diffLineHunks and wholeRegionHunks: minimal hunks when affordable, a correct bounded hunk otherwise. */
import { structuredPatch } from "diff";
import { describe, expect, it, vi } from "vitest";
import {
  diffLineHunks,
  diffPool,
  INLINE_DIFF_MAX_CHARS,
  type LineHunk,
  wholeRegionHunks,
} from "../../../src/util/line-diff.js";

/** Applies hunks to `text` (what `patch` does), to check a patch is correct. */
function applyHunks(text: string, hunks: LineHunk[]): string {
  const lines = text === "" ? [] : text.split(/(?<=\n)/);
  const out: string[] = [];
  let at = 0;
  for (const hunk of hunks) {
    const start = hunk.oldLines === 0 ? hunk.oldStart : hunk.oldStart - 1;
    out.push(...lines.slice(at, start));
    at = start;
    for (let i = 0; i < hunk.lines.length; i++) {
      const line = hunk.lines[i]!;
      const eol = hunk.lines[i + 1] === "\\ No newline at end of file" ? "" : "\n";
      if (line.startsWith("\\")) continue;
      if (line[0] === " ") out.push(lines[at++]!);
      else if (line[0] === "-") {
        expect(lines[at]).toBe(line.slice(1) + eol);
        at++;
      } else out.push(line.slice(1) + eol);
    }
  }
  return out.join("") + lines.slice(at).join("");
}

const numbered = (n: number, word: string) => Array.from({ length: n }, (_, i) => `${word} ${i}\n`).join("");

describe("wholeRegionHunks", () => {
  it("replaces only the lines between the common head and tail, with context, in jsdiff's shape", () => {
    expect(wholeRegionHunks("a\nb\nc\nd\ne\nf\n", "a\nb\nX\nY\nZ\ne\nf\n", 1)).toEqual([
      {
        oldStart: 2,
        oldLines: 4,
        newStart: 2,
        newLines: 5,
        lines: [" b", "-c", "-d", "+X", "+Y", "+Z", " e"],
      },
    ]);
  });

  it("marks a last line without newline on either side", () => {
    const hunks = wholeRegionHunks("a\nb", "a\nb\n", 3);
    expect(hunks).toEqual([
      {
        oldStart: 1,
        oldLines: 2,
        newStart: 1,
        newLines: 2,
        lines: [" a", "-b", "\\ No newline at end of file", "+b"],
      },
    ]);
    expect(applyHunks("a\nb", hunks)).toBe("a\nb\n");
  });

  it("handles empty sides as jsdiff does", () => {
    expect(wholeRegionHunks("", "x\n", 3)).toEqual(structuredPatch("a", "b", "", "x\n").hunks);
    expect(wholeRegionHunks("x\n", "", 3)).toEqual(structuredPatch("a", "b", "x\n", "").hunks);
    expect(wholeRegionHunks("same\n", "same\n", 3)).toEqual([]);
  });
});

describe("diffLineHunks", () => {
  it("gives jsdiff's minimal hunks for an input above the inline bound (diffed in the worker pool)", async () => {
    const old = numbered(5000, "line");
    expect(old.length).toBeGreaterThan(INLINE_DIFF_MAX_CHARS);
    const neu = old.replace("line 2500\n", "changed\n").replace("line 10\n", "");
    const hunks = await diffLineHunks(old, neu, { context: 3 });
    expect(hunks).toEqual(structuredPatch("a", "b", old, neu, undefined, undefined, { context: 3 }).hunks);
  });

  it("gives one correct replacement hunk for a 12,000-line rewrite (edit length over the bound)", async () => {
    const old = `head\n${numbered(12_000, "old")}tail\n`;
    const neu = `head\n${numbered(12_000, "new")}tail\n`;
    const hunks = await diffLineHunks(old, neu, { context: 3 });
    expect(applyHunks(old, hunks)).toBe(neu);
    expect(hunks.flatMap((h) => h.lines).filter((l) => l[0] === "-")).toHaveLength(12_000);
    expect(hunks.flatMap((h) => h.lines).filter((l) => l[0] === "+")).toHaveLength(12_000);
  });

  it("hands a 12,000-line rewrite whole to the pool and returns its hunks as they are (issue 11)", async () => {
    // Before, the linear count and the whole-region hunk ran on the calling thread (17-30 ms of
    // event-loop time per diff of these texts on a busy machine). A stand-in pool result comes back
    // untouched: neither the line split nor the count nor the hunk is done on this thread.
    const old = numbered(12_000, "old line of the file");
    const neu = numbered(12_000, "new line of the file");
    const answer: LineHunk[] = [{ oldStart: 1, oldLines: 1, newStart: 1, newLines: 1, lines: ["-x", "+y"] }];
    const run = vi.spyOn(diffPool(), "run").mockResolvedValue(answer);
    try {
      expect(await diffLineHunks(old, neu, { context: 3 })).toBe(answer);
      expect(run).toHaveBeenCalledTimes(1);
      expect(run.mock.calls[0]?.[0]).toMatchObject({ oldText: old, newText: neu, context: 3 });
    } finally {
      run.mockRestore();
    }
  });

  it("gives a correct patch for 12,000 reordered lines (the pool diff's time bound, then one hunk)", async () => {
    const old = numbered(12_000, "line");
    const neu = old
      .split(/(?<=\n)/)
      .reverse()
      .join("");
    const hunks = await diffLineHunks(old, neu, { context: 3 });
    expect(applyHunks(old, hunks)).toBe(neu);
  });

  it("rejects AbortError when the signal fires during a pool diff", async () => {
    const controller = new AbortController();
    const old = numbered(12_000, "line");
    const job = diffLineHunks(
      old,
      old
        .split(/(?<=\n)/)
        .reverse()
        .join(""),
      {
        context: 3,
        signal: controller.signal,
      },
    );
    controller.abort();
    await expect(job).rejects.toMatchObject({ name: "AbortError" });
  });
});
