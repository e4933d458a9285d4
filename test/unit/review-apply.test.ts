/** Review: --apply writes only when the host is unchanged since the snapshot, atomically, confined. */
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
import { applyChanges, type FileChange, HostChangedError, snapshotHost } from "../../src/review/index.js";

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
    const result = await applyChanges(root, changes(), { snapshot });
    expect(result).toEqual({
      written: ["a.txt", "dir/new.sh"],
      deleted: ["del.txt"],
      skipped: [{ path: "ln", reason: "symlink not applied" }],
    });
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("new\n");
    expect(existsSync(join(root, "del.txt"))).toBe(false);
    expect(statSync(join(root, "dir/new.sh")).mode & 0o777).toBe(0o755);
    expect(existsSync(join(root, "ln"))).toBe(false);
    expect(readdirSync(root).sort()).toEqual(["a.txt", "dir", "other.txt"]);
  });

  it("refuses, writing nothing, when a touched host file changed since the snapshot", async () => {
    const root = host();
    const snapshot = await snapshotHost(root);
    writeFileSync(join(root, "a.txt"), "edited by the user\n");
    const err = await applyChanges(root, changes(), { snapshot }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HostChangedError);
    expect((err as HostChangedError).code).toBe("CONFLICT");
    expect((err as HostChangedError).paths).toEqual(["a.txt"]);
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("edited by the user\n");
    expect(existsSync(join(root, "del.txt"))).toBe(true);
    expect(existsSync(join(root, "dir"))).toBe(false);
  });

  it("refuses when a file the run adds appeared on the host meanwhile", async () => {
    const root = host();
    const snapshot = await snapshotHost(root);
    mkdirSync(join(root, "dir"));
    writeFileSync(join(root, "dir/new.sh"), "mine\n");
    await expect(applyChanges(root, changes(), { snapshot })).rejects.toThrow(
      "Not applied: 1 host file changed since the run started (dir/new.sh).",
    );
  });

  it("applies when only an untouched host file changed", async () => {
    const root = host();
    const snapshot = await snapshotHost(root);
    writeFileSync(join(root, "other.txt"), "changed\n");
    await expect(applyChanges(root, changes(), { snapshot })).resolves.toMatchObject({
      written: ["a.txt", "dir/new.sh"],
    });
  });

  it("never writes through a host symlink that leads out of the workspace", async () => {
    const root = host();
    const outside = mkdtempSync(join(tmpdir(), "warden-outside-"));
    symlinkSync(outside, join(root, "out"));
    const snapshot = await snapshotHost(root);
    const outward: FileChange[] = [
      { path: "out/pwn.txt", kind: "added", oldBytes: null, newBytes: Buffer.from("x"), mode: 0o644 },
    ];
    await expect(applyChanges(root, outward, { snapshot })).rejects.toThrow("outside the workspace");
    expect(readdirSync(outside)).toEqual([]);
  });

  it("never writes through a parent directory that is a host link, even one pointing inside", async () => {
    const root = host();
    mkdirSync(join(root, "real"));
    symlinkSync(join(root, "real"), join(root, "alias"));
    const snapshot = await snapshotHost(root);
    const through: FileChange[] = [
      { path: "alias/f.txt", kind: "added", oldBytes: null, newBytes: Buffer.from("x"), mode: 0o644 },
    ];
    await expect(applyChanges(root, through, { snapshot })).rejects.toThrow(
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
