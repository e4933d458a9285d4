/**
 * Issue 37 item 6: one rule (apply-rule.ts) decides what `warden apply` and `--apply` write, and a
 * host link the session replaced by a file (or deleted) is applied to the link itself, never
 * through it, without the false "changed on the host" conflict; a link changed on the host
 * meanwhile is a conflict.
 */
import {
  lstatSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { runApply } from "../../../src/cli/commands/apply.js";
import {
  applyChanges,
  applyRefusal,
  type FileChange,
  formatPatch,
  MergeConflictError,
  saveBaseStore,
  splitPatch,
} from "../../../src/review/index.js";

/** A workspace with `ln` -> `outside` (a file beside it, outside the workspace), and that file. */
function linked(): { root: string; outside: string } {
  const root = mkdtempSync(join(tmpdir(), "warden-apply-links-"));
  const outside = join(mkdtempSync(join(tmpdir(), "warden-apply-outside-")), "target");
  writeFileSync(outside, "outside\n");
  symlinkSync(outside, join(root, "ln"));
  return { root, outside };
}

const replaced = (outside: string): FileChange => ({
  path: "ln",
  kind: "modified",
  oldBytes: Buffer.from(outside),
  oldLink: true,
  newBytes: Buffer.from("file\n"),
  mode: 0o644,
});

describe("apply and links", () => {
  afterEach(() => {
    process.exitCode = undefined;
    vi.restoreAllMocks();
  });

  it("one rule: links made, directories, over-limit files and .git paths are refused, with the reason", () => {
    expect(applyRefusal({ path: "a/b.txt" })).toBeUndefined();
    expect(applyRefusal({ path: "ln", special: "symlink" })).toBe("symlink not applied");
    expect(applyRefusal({ path: "d", special: "directory" })).toBe("directory not applied");
    expect(applyRefusal({ path: "big", oversize: true })).toBe(
      "over the review's file size limit, not applied",
    );
    expect(applyRefusal({ path: "sub/.GIT/hooks/pre-commit" })).toBe(
      "a .git file or directory, never applied",
    );
  });

  it("--apply replaces a host link by the session's file, writing nothing through it", async () => {
    const { root, outside } = linked();
    const result = await applyChanges(root, [replaced(outside)]);
    expect(result).toEqual({ written: ["ln"], deleted: [], merged: [], skipped: [] });
    expect(lstatSync(join(root, "ln")).isFile()).toBe(true);
    expect(readFileSync(join(root, "ln"), "utf8")).toBe("file\n");
    expect(readFileSync(outside, "utf8")).toBe("outside\n");
  });

  it("--apply removes a host link the session deleted, not the file it names", async () => {
    const { root, outside } = linked();
    const change: FileChange = {
      path: "ln",
      kind: "deleted",
      oldBytes: Buffer.from(outside),
      oldLink: true,
      newBytes: null,
    };
    expect(await applyChanges(root, [change])).toEqual({
      written: [],
      deleted: ["ln"],
      merged: [],
      skipped: [],
    });
    expect(() => lstatSync(join(root, "ln"))).toThrow("ENOENT");
    expect(readFileSync(outside, "utf8")).toBe("outside\n");
  });

  it("a host link pointed elsewhere since the session started is a conflict; nothing is written", async () => {
    const { root, outside } = linked();
    const change = replaced(`${outside}-then`);
    await expect(applyChanges(root, [change])).rejects.toThrow(MergeConflictError);
    await expect(applyChanges(root, [change])).rejects.toThrow(
      "  ln: was a symlink when the session started and changed on the host since (the session replaced or deleted it)\n",
    );
    expect(readlinkSync(join(root, "ln"))).toBe(outside);
  });

  it("warden apply of a saved patch: link replaced by a file, applied; a link made, skipped", async () => {
    const { root, outside } = linked();
    const made: FileChange = {
      path: "made",
      kind: "added",
      oldBytes: null,
      newBytes: Buffer.from("../../../../etc/shadow"),
      newLink: true,
      special: "symlink",
    };
    const changes = [made, replaced(outside)];
    const patch = join(mkdtempSync(join(tmpdir(), "warden-runs-")), "r.jsonl.patch");
    // A patch of an older warden still carries the link made: warden apply skips it by the same rule.
    writeFileSync(patch, await formatPatch(changes));
    await saveBaseStore(patch, changes);
    expect(splitPatch(readFileSync(patch, "utf8")).map((s) => [s.path, s.skip])).toEqual([
      ["made", "symlink not applied"],
      ["ln", undefined],
      ["ln", undefined],
    ]);
    const out = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    await runApply(patch, { workspace: root });
    expect(process.exitCode).toBeUndefined();
    expect(out.mock.calls.map((c) => String(c[0])).join("")).toBe(
      `Applied ${patch} to ${root}: 1 written, 0 deleted.\n  skipped made: symlink not applied\n`,
    );
    expect(lstatSync(join(root, "ln")).isFile()).toBe(true);
    expect(readFileSync(join(root, "ln"), "utf8")).toBe("file\n");
    expect(() => lstatSync(join(root, "made"))).toThrow("ENOENT");
    expect(readFileSync(outside, "utf8")).toBe("outside\n");
  });

  it("warden apply of a saved patch whose host link changed meanwhile: a conflict (its base is kept beside the patch)", async () => {
    const { root, outside } = linked();
    const changes = [replaced(outside)];
    const patch = join(mkdtempSync(join(tmpdir(), "warden-runs-")), "r.jsonl.patch");
    writeFileSync(patch, await formatPatch(changes));
    await saveBaseStore(patch, changes);
    rmSync(join(root, "ln"));
    symlinkSync("elsewhere", join(root, "ln"));
    const err = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    await runApply(patch, { workspace: root });
    expect(process.exitCode).toBe(1);
    expect(String(err.mock.calls[0]?.[0])).toContain(
      "  ln: was a symlink when the session started and changed on the host since (the session replaced or deleted it)\n",
    );
    expect(readlinkSync(join(root, "ln"))).toBe("elsewhere");
  });
});
