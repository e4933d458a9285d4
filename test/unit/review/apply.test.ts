/** Review: --apply is a three-way merge onto the host that never loses a host edit; atomic, confined. */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  applyChanges,
  type FileChange,
  MergeConflictError,
  snapshotHost,
} from "../../../src/review/index.js";

function host(): string {
  const root = mkdtempSync(join(tmpdir(), "warden-apply-"));
  writeFileSync(join(root, "a.txt"), "old\n");
  writeFileSync(join(root, "del.txt"), "x\n");
  writeFileSync(join(root, "other.txt"), "untouched\n");
  return root;
}

const changes = (): FileChange[] => [
  {
    path: "a.txt",
    kind: "modified",
    oldBytes: Buffer.from("old\n"),
    newBytes: Buffer.from("new\n"),
    mode: 0o644,
  },
  { path: "del.txt", kind: "deleted", oldBytes: Buffer.from("x\n"), newBytes: null },
  { path: "dir/new.sh", kind: "added", oldBytes: null, newBytes: Buffer.from("echo\n"), mode: 0o755 },
  { path: "ln", kind: "added", oldBytes: null, newBytes: null, special: "symlink" },
];

describe("review apply", () => {
  it("applies modifications, additions (with mode) and deletions; skips symlinks", async () => {
    const root = host();
    const snapshot = await snapshotHost(root);
    expect([...snapshot.keys()].sort()).toEqual(["a.txt", "del.txt", "other.txt"]);
    const result = await applyChanges(root, changes());
    expect(result).toEqual({
      written: ["a.txt", "dir/new.sh"],
      deleted: ["del.txt"],
      merged: [],
      skipped: [{ path: "ln", reason: "symlink not applied" }],
    });
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("new\n");
    expect(existsSync(join(root, "del.txt"))).toBe(false);
    expect(statSync(join(root, "dir/new.sh")).mode & 0o777).toBe(0o755);
    expect(existsSync(join(root, "ln"))).toBe(false);
    expect(readdirSync(root).sort()).toEqual(["a.txt", "dir", "other.txt"]);
  });

  it("refuses, writing nothing, when the host and the session changed the same lines", async () => {
    const root = host();
    writeFileSync(join(root, "a.txt"), "edited by the user\n");
    const err = await applyChanges(root, changes()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MergeConflictError);
    expect((err as MergeConflictError).code).toBe("CONFLICT");
    expect((err as MergeConflictError).conflicts).toEqual([
      {
        path: "a.txt",
        reason:
          "1 conflicting hunk: the host and the session changed the same or adjacent lines (a three-way merge, as git's, keeps only changes with an unchanged line between them)",
      },
    ]);
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("edited by the user\n");
    expect(existsSync(join(root, "del.txt"))).toBe(true);
    expect(existsSync(join(root, "dir"))).toBe(false);
  });

  it("names every conflicting file with its reason (added on both sides, deleted on one)", async () => {
    const root = host();
    mkdirSync(join(root, "dir"));
    writeFileSync(join(root, "dir/new.sh"), "mine\n");
    writeFileSync(join(root, "del.txt"), "kept and edited\n");
    await expect(applyChanges(root, changes())).rejects.toThrow(
      "Not applied: 2 files conflict with host edits made since the session started:\n" +
        "  del.txt: changed on the host, deleted in the session\n" +
        "  dir/new.sh: added on the host and in the session, differently\n",
    );
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("old\n");
  });

  it("merges a host edit that does not overlap the session's, keeping both", async () => {
    const root = host();
    const base = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
    writeFileSync(join(root, "m.txt"), base.replace("1\n", "one (user)\n"));
    const change: FileChange = {
      path: "m.txt",
      kind: "modified",
      oldBytes: Buffer.from(base),
      newBytes: Buffer.from(base.replace("9\n", "nine (session)\n")),
      mode: 0o644,
    };
    const result = await applyChanges(root, [change]);
    expect(result.merged).toEqual(["m.txt"]);
    expect(readFileSync(join(root, "m.txt"), "utf8")).toBe(
      "one (user)\n2\n3\n4\n5\n6\n7\n8\nnine (session)\n",
    );
  });

  it("applies when only an untouched host file changed", async () => {
    const root = host();
    writeFileSync(join(root, "other.txt"), "changed\n");
    await expect(applyChanges(root, changes())).resolves.toMatchObject({
      written: ["a.txt", "dir/new.sh"],
    });
  });

  it("never writes through a host symlink that leads out of the workspace", async () => {
    const root = host();
    const outside = mkdtempSync(join(tmpdir(), "warden-outside-"));
    symlinkSync(outside, join(root, "out"));
    const outward: FileChange[] = [
      { path: "out/pwn.txt", kind: "added", oldBytes: null, newBytes: Buffer.from("x"), mode: 0o644 },
    ];
    await expect(applyChanges(root, outward)).rejects.toThrow("outside the workspace");
    expect(readdirSync(outside)).toEqual([]);
  });

  it("never writes through a parent directory that is a host link, even one pointing inside", async () => {
    const root = host();
    mkdirSync(join(root, "real"));
    symlinkSync(join(root, "real"), join(root, "alias"));
    const through: FileChange[] = [
      { path: "alias/f.txt", kind: "added", oldBytes: null, newBytes: Buffer.from("x"), mode: 0o644 },
    ];
    await expect(applyChanges(root, through)).rejects.toThrow(
      `Path 'alias/f.txt' resolves to '${realpathSync(root)}/alias (not a directory: a link or file)'`,
    );
    expect(readdirSync(join(root, "real"))).toEqual([]);
  });

  it("hashes a host link by its target and does not descend linked directories in the snapshot", async () => {
    const root = host();
    const outside = mkdtempSync(join(tmpdir(), "warden-outside-"));
    writeFileSync(join(outside, "secret"), "s\n");
    symlinkSync(outside, join(root, "out"));
    const snapshot = await snapshotHost(root);
    expect(snapshot.get("out")).toBe(`link:${outside}`);
    expect(snapshot.has("out/secret")).toBe(false);
  });
});
