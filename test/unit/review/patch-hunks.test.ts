/** hunkText: a large section's diff and hunk text built whole in the worker pool, the same text as inline. */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { formatPatch } from "../../../src/review/patch.js";
import { formatHunks, hunkText, hunkTextPool, PATCH_CONTEXT_LINES } from "../../../src/review/patch-hunks.js";
import { diffLineHunks, INLINE_DIFF_MAX_CHARS } from "../../../src/util/index.js";

const numbered = (n: number, word: string) =>
  Array.from({ length: n }, (_, i) => `${word} line ${i} of the file\n`).join("");

afterEach(() => vi.restoreAllMocks());

describe("hunkText", () => {
  it("gives the inline text for a small change in a large file (a minimal diff, from the pool)", async () => {
    const old = numbered(5000, "a");
    expect(old.length).toBeGreaterThan(INLINE_DIFF_MAX_CHARS);
    const neu = old.replace("a line 2500 ", "changed ").replace("a line 10 of the file\n", "");
    const built = await hunkText(old, neu);
    expect(built).toEqual(formatHunks(await diffLineHunks(old, neu, { context: PATCH_CONTEXT_LINES })));
    expect(built).toMatchObject({ hunks: 2, added: 1, removed: 2 });
  });

  it("hands a 12,000-line rewrite whole to the pool and returns its text as it is (no work here)", async () => {
    // The event loop's part is the hand-over and one string back: a stand-in pool result comes
    // back untouched, so neither the line split nor the 24,000-line text is built on this thread.
    const old = numbered(12_000, "old");
    const neu = numbered(12_000, "new");
    const answer = { text: "from the worker\n", hunks: 1, added: 12_000, removed: 12_000 };
    const run = vi.spyOn(hunkTextPool(), "run").mockResolvedValue(answer);
    expect(await hunkText(old, neu)).toBe(answer);
    expect(run).toHaveBeenCalledTimes(1);
    expect(run.mock.calls[0]?.[0]).toMatchObject({
      oldText: old,
      newText: neu,
      context: PATCH_CONTEXT_LINES,
    });
  });

  it("keeps small inputs on this thread", async () => {
    const run = vi.spyOn(hunkTextPool(), "run");
    expect(await hunkText("a\nb\n", "a\nc\n")).toEqual({
      text: "@@ -1,2 +1,2 @@\n a\n-b\n+c\n",
      hunks: 1,
      added: 1,
      removed: 1,
    });
    expect(run).not.toHaveBeenCalled();
  });

  it("builds the text here when the pool fails (queue full, worker out of memory)", async () => {
    const old = numbered(12_000, "old");
    const neu = numbered(12_000, "new");
    vi.spyOn(hunkTextPool(), "run").mockRejectedValue(new Error("worker pool queue is full"));
    const built = await hunkText(old, neu);
    expect(built).toEqual(formatHunks(await diffLineHunks(old, neu, { context: PATCH_CONTEXT_LINES })));
    expect(built).toMatchObject({ hunks: 1, added: 12_000, removed: 12_000 });
  });

  it("rejects AbortError when the signal fires during a pool job", async () => {
    const controller = new AbortController();
    const job = hunkText(numbered(12_000, "old"), numbered(12_000, "new"), controller.signal);
    controller.abort();
    await expect(job).rejects.toMatchObject({ name: "AbortError" });
  });

  it("gives a patch of a 12,000-line rewrite, an added and a deleted file that git apply takes", async () => {
    const dir = mkdtempSync(join(tmpdir(), "warden-patch-hunks-"));
    const old = numbered(12_000, "old");
    const neu = `${numbered(12_000, "new")}end`;
    writeFileSync(join(dir, "big.txt"), old);
    writeFileSync(join(dir, "gone.txt"), old);
    const patch = await formatPatch([
      {
        path: "big.txt",
        kind: "modified",
        oldBytes: Buffer.from(old),
        newBytes: Buffer.from(neu),
        mode: 0o644,
      },
      { path: "gone.txt", kind: "deleted", oldBytes: Buffer.from(old), newBytes: null },
      { path: "new.txt", kind: "added", oldBytes: null, newBytes: Buffer.from(neu), mode: 0o644 },
    ]);
    try {
      execFileSync("git", ["init", "-q", dir]);
      execFileSync("git", ["-C", dir, "apply", "-"], { input: patch });
      expect(readFileSync(join(dir, "big.txt"), "utf8")).toBe(neu);
      expect(readFileSync(join(dir, "new.txt"), "utf8")).toBe(neu);
      expect(existsSync(join(dir, "gone.txt"))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
