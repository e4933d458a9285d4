/** `warden apply <patch>`: a saved session patch applied later, merged with host edits made meanwhile. */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { runApply } from "../../../src/cli/commands/apply.js";
import { type FileChange, formatPatch, saveBaseStore } from "../../../src/review/index.js";

const BASE = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
const PYC = Buffer.from([0x55, 0x0d, 0x0d, 0x0a, 0, 0, 1, 2, 3]);

/** A host workspace, and the session's saved patch (with its base store) changing it. */
async function saved(): Promise<{ root: string; patch: string }> {
  const root = mkdtempSync(join(tmpdir(), "warden-apply-later-"));
  writeFileSync(join(root, "m.txt"), BASE);
  writeFileSync(join(root, "c.pyc"), PYC);
  const changes: FileChange[] = [
    {
      path: "c.pyc",
      kind: "modified",
      oldBytes: PYC,
      newBytes: Buffer.concat([PYC, Buffer.from([0, 7])]),
      mode: 0o644,
    },
    {
      path: "m.txt",
      kind: "modified",
      oldBytes: Buffer.from(BASE),
      newBytes: Buffer.from(BASE.replace("9\n", "nine\n")),
      mode: 0o644,
    },
    { path: "n/new.txt", kind: "added", oldBytes: null, newBytes: Buffer.from("fresh\n"), mode: 0o644 },
  ];
  const patch = join(mkdtempSync(join(tmpdir(), "warden-runs-")), "r.jsonl.patch");
  writeFileSync(patch, await formatPatch(changes));
  await saveBaseStore(patch, changes);
  return { root, patch };
}

describe("warden apply", () => {
  afterEach(() => {
    process.exitCode = undefined;
    vi.restoreAllMocks();
  });

  it("applies a saved patch later, text and binary, merging a host edit made meanwhile", async () => {
    const out = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    const { root, patch } = await saved();
    writeFileSync(join(root, "m.txt"), BASE.replace("1\n", "one (user)\n"));
    await runApply(patch, { workspace: root });
    expect(process.exitCode).toBeUndefined();
    expect(readFileSync(join(root, "m.txt"), "utf8")).toBe(
      BASE.replace("1\n", "one (user)\n").replace("9\n", "nine\n"),
    );
    expect(readFileSync(join(root, "c.pyc"))).toEqual(Buffer.concat([PYC, Buffer.from([0, 7])]));
    expect(readFileSync(join(root, "n/new.txt"), "utf8")).toBe("fresh\n");
    expect(out.mock.calls.map((c) => String(c[0])).join("")).toContain(
      "merged with your edits made meanwhile: m.txt",
    );
  });

  it("writes nothing and names the file when the host changed the same lines (exit 1)", async () => {
    const err = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    const { root, patch } = await saved();
    writeFileSync(join(root, "m.txt"), BASE.replace("9\n", "NINE (user)\n"));
    await runApply(patch, { workspace: root });
    expect(process.exitCode).toBe(1);
    expect(String(err.mock.calls[0]?.[0])).toContain(
      "  m.txt: 1 conflicting hunk: the host and the session changed the same or adjacent lines (a three-way merge, as git's, keeps only changes with an unchanged line between them)\n",
    );
    expect(readFileSync(join(root, "m.txt"), "utf8")).toBe(BASE.replace("9\n", "NINE (user)\n"));
    expect(readFileSync(join(root, "c.pyc"))).toEqual(PYC);
  });

  it("--check writes nothing", async () => {
    vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    const { root, patch } = await saved();
    await runApply(patch, { workspace: root, check: true });
    expect(process.exitCode).toBeUndefined();
    expect(readFileSync(join(root, "m.txt"), "utf8")).toBe(BASE);
  });

  it("exits 2 naming the file when it is not a patch", async () => {
    const err = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    const file = join(mkdtempSync(join(tmpdir(), "warden-np-")), "x.patch");
    writeFileSync(file, "hello\n");
    await runApply(file, { workspace: tmpdir() });
    expect(process.exitCode).toBe(2);
    expect(String(err.mock.calls[0]?.[0])).toBe(
      "warden: The file holds no git-format patch (no `diff --git` line).\n",
    );
  });
});
