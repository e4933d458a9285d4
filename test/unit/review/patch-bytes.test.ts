import { afterEach, describe, expect, it, vi } from "vitest";
import type { FileChange } from "../../../src/review/changes.js";
import { formatPatch } from "../../../src/review/patch.js";
import { formatPatchBytes, PATCH_WORKER_MIN_BYTES, patchPool } from "../../../src/review/patch-bytes.js";

const numbered = (n: number, word: string) =>
  Array.from({ length: n }, (_, i) => `${word} line ${i} of the file\n`).join("");

afterEach(() => vi.restoreAllMocks());

/** One change of every kind the renderer tells apart (text, binary, links, oversize, modes, equal). */
function everyKind(): FileChange[] {
  const small = "α\nb\nc\nd\ne\nf\ng\n";
  const binary = Buffer.concat([Buffer.from("PNG\0"), Buffer.alloc(3000, 7), Buffer.from("tail")]);
  return [
    {
      path: "big.txt",
      kind: "modified",
      oldBytes: Buffer.from(numbered(12_000, "old")),
      newBytes: Buffer.from(`${numbered(12_000, "new")}end`),
      mode: 0o644,
    },
    {
      path: "one-line.txt",
      kind: "modified",
      oldBytes: Buffer.from(numbered(2000, "a")),
      newBytes: Buffer.from(numbered(2000, "a").replace("a line 1000 ", "changed ")),
      mode: 0o755,
    },
    { path: "added.txt", kind: "added", oldBytes: null, newBytes: Buffer.from(small), mode: 0o755 },
    { path: "deleted.txt", kind: "deleted", oldBytes: Buffer.from(small), newBytes: null },
    {
      path: "no-newline.txt",
      kind: "modified",
      oldBytes: Buffer.from("x\ny"),
      newBytes: Buffer.from("x\nz"),
      mode: 0o644,
    },
    {
      path: "same.txt",
      kind: "modified",
      oldBytes: Buffer.from(small),
      newBytes: Buffer.from(small),
      mode: 0o644,
    },
    {
      path: "image.bin",
      kind: "modified",
      oldBytes: binary,
      newBytes: Buffer.concat([binary, Buffer.from([0, 1, 2])]),
      mode: 0o644,
    },
    { path: "new.bin", kind: "added", oldBytes: null, newBytes: binary, mode: 0o644 },
    {
      path: "link",
      kind: "modified",
      oldBytes: Buffer.from("a/target"),
      newBytes: Buffer.from("b/target"),
      oldLink: true,
      newLink: true,
      special: "symlink",
    },
    {
      path: "swapped",
      kind: "modified",
      oldBytes: Buffer.from(small),
      newBytes: Buffer.from("target"),
      newLink: true,
      special: "symlink",
      mode: 0o777,
    },
    {
      path: "huge.txt",
      kind: "modified",
      oldBytes: Buffer.alloc(0),
      newBytes: Buffer.alloc(0),
      oversize: true,
      mode: 0o644,
    },
    { path: "dir", kind: "added", oldBytes: null, newBytes: null, special: "directory" },
    // A name git quotes (quote-path.ts): the worker runs quotePath by its source text.
    { path: 'q\n\x1b"é\\.txt', kind: "added", oldBytes: null, newBytes: Buffer.from(small), mode: 0o644 },
  ];
}

describe("formatPatchBytes", () => {
  it("renders a large change in the worker pool, byte for byte the patch formatPatch writes", async () => {
    const changes = everyKind();
    const run = vi.spyOn(patchPool(), "run");
    const bytes = await formatPatchBytes(changes);
    expect(run).toHaveBeenCalledTimes(1);
    const before = Buffer.from(await formatPatch(changes));
    expect(bytes.length).toBeGreaterThan(600_000);
    expect(bytes.equals(before)).toBe(true);
  });

  it("gives each kind of change alone as formatPatch does, through the worker too", async () => {
    for (const change of everyKind()) {
      const fromWorker = Buffer.from(await patchPool().run([change]));
      expect(fromWorker.toString(), change.path).toBe(await formatPatch([change]));
    }
    expect((await formatPatch(everyKind().slice(-1))).split("\n")[0]).toBe(
      'diff --git "a/q\\n\\033\\"\\303\\251\\\\.txt" "b/q\\n\\033\\"\\303\\251\\\\.txt"',
    );
  });

  it("hands a large change whole to the pool and returns its bytes as they are (no rendering here)", async () => {
    // A stand-in pool answer comes back untouched: no blob id, text or encoding is made on this thread.
    const answer = Buffer.from("from the worker\n");
    const run = vi.spyOn(patchPool(), "run").mockResolvedValue(answer);
    const changes = everyKind();
    expect((await formatPatchBytes(changes)).toString()).toBe("from the worker\n");
    expect(run).toHaveBeenCalledTimes(1);
    expect(run.mock.calls[0]?.[0]).toBe(changes);
  });

  it("keeps a change under PATCH_WORKER_MIN_BYTES on this thread", async () => {
    const run = vi.spyOn(patchPool(), "run");
    const change: FileChange = {
      path: "a.txt",
      kind: "modified",
      oldBytes: Buffer.from("a\nb\n"),
      newBytes: Buffer.from("a\nc\n"),
      mode: 0o644,
    };
    expect(PATCH_WORKER_MIN_BYTES).toBeGreaterThan(8);
    expect((await formatPatchBytes([change])).toString()).toBe(await formatPatch([change]));
    expect(run).not.toHaveBeenCalled();
  });

  it("renders here when the pool fails (queue full, worker out of memory)", async () => {
    vi.spyOn(patchPool(), "run").mockRejectedValue(new Error("worker pool queue is full"));
    const changes = everyKind();
    expect((await formatPatchBytes(changes)).toString()).toBe(await formatPatch(changes));
  });

  it("rejects AbortError when the signal fires during a pool job", async () => {
    const controller = new AbortController();
    const job = formatPatchBytes(everyKind(), { signal: controller.signal });
    controller.abort();
    await expect(job).rejects.toMatchObject({ name: "AbortError" });
  });
});
