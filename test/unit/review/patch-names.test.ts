/**
 * Review: file names in the patch are quoted as git quotes them, so a name can never start a line of
 * the patch (a newline-injected fake section) or reach a terminal raw (escape sequences).
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { runApply } from "../../../src/cli/commands/apply.js";
import { statOfPatch } from "../../../src/cli/commands/diff.js";
import {
  computeDiffstat,
  formatDiffstat,
  formatPatch,
  patchChanges,
  quotePath,
  saveBaseStore,
  splitPatch,
  unquotePath,
} from "../../../src/review/index.js";
import { addedFile } from "../../helpers/file-change.js";

// The tester's name: a complete fake section for README.md, then a fake link mode line.
const INJECTED =
  "zz\ndiff --git a/README.md b/README.md\nindex ce013625030ba8dba906f756967f9e9ca394464a..aa93b250f50a207187045e1842fdc674d84b76c7 100644\n" +
  "--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-hello\n+pwned\n\nnew file mode 120000";
const SPOOF = "zz\x1b[2K\x1b[2A\x1b[1G\x1b[J notes.md |    1 +";

describe("patch file names", () => {
  afterEach(() => {
    process.exitCode = undefined;
    vi.restoreAllMocks();
  });

  it("quotes a name as git does (core.quotePath) and reads it back", () => {
    expect(quotePath("dir/plain name.txt")).toBe("dir/plain name.txt");
    expect(quotePath('a/z\n\t"\\\x1b\x7fé')).toBe('"a/z\\n\\t\\"\\\\\\033\\177\\303\\251"');
    expect(unquotePath('"a/z\\n\\t\\"\\\\\\033\\177\\303\\251" rest')).toEqual({
      name: 'a/z\n\t"\\\x1b\x7fé',
      end: 29,
    });
  });

  it("renders a newline-injected name quoted; splitting gives one section with the exact name", async () => {
    const text = await formatPatch([addedFile(INJECTED, "x\n")]);
    const q = quotePath(`b/${INJECTED}`);
    expect(text.split("\n").slice(0, 5)).toEqual([
      `diff --git ${quotePath(`a/${INJECTED}`)} ${q}`,
      "new file mode 100644",
      "index 0000000000000000000000000000000000000000..587be6b4c3f93f93c489c0111bba5596147a26cb",
      "--- /dev/null",
      `+++ ${q}`,
    ]);
    const sections = splitPatch(text);
    expect(sections.map((s) => [s.path, s.newMode, s.skip])).toEqual([[INJECTED, 0o644, undefined]]);
  });

  it("warden apply writes only the named file: README.md is unchanged", async () => {
    const out = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    const root = mkdtempSync(join(tmpdir(), "warden-names-"));
    writeFileSync(join(root, "README.md"), "hello\n");
    const changes = [addedFile(INJECTED, "x\n")];
    const patch = join(mkdtempSync(join(tmpdir(), "warden-runs-")), "r.jsonl.patch");
    writeFileSync(patch, await formatPatch(changes));
    await saveBaseStore(patch, changes);
    await runApply(patch, { workspace: root });
    expect(process.exitCode).toBeUndefined();
    expect(readFileSync(join(root, "README.md"), "utf8")).toBe("hello\n");
    expect(readFileSync(join(root, INJECTED), "utf8")).toBe("x\n");
    expect(existsSync(join(root, "zz"))).toBe(false);
    expect(out.mock.calls.map((c) => String(c[0])).join("")).toBe(
      `Applied ${patch} to ${root}: 1 written, 0 deleted.\n`,
    );
  });

  it("shows escape sequences in names escaped in the diffstat, `warden diff --stat` and skipped lines", async () => {
    const changes = [addedFile(SPOOF, "x\n"), addedFile("Makefile", "all:\n")];
    const patches = await patchChanges(changes);
    expect(formatDiffstat(computeDiffstat(patches))).toBe(
      ' "zz\\033[2K\\033[2A\\033[1G\\033[J notes.md |    1 +" |    1 +\n' +
        " Makefile                                          |    1 +\n" +
        " 2 files changed, 2 insertions(+), 0 deletions(-)\n",
    );
    expect(statOfPatch(patches.map((p) => p.text).join(""))).toBe(
      ' "zz\\033[2K\\033[2A\\033[1G\\033[J notes.md |    1 +" |    1 +\n' +
        " Makefile                                          |    1 +\n" +
        " 2 files changed, 2 insertions(+), 0 deletions(-)\n",
    );
    const out = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    const root = mkdtempSync(join(tmpdir(), "warden-names-"));
    const gitFile = [addedFile(`sub\x1b[2K/.git`, "gitdir: ../cfgdir\n")];
    const patch = join(mkdtempSync(join(tmpdir(), "warden-runs-")), "r.jsonl.patch");
    writeFileSync(patch, await formatPatch(gitFile));
    await runApply(patch, { workspace: root });
    expect(out.mock.calls.map((c) => String(c[0])).join("")).toBe(
      `Applied ${patch} to ${root}: 0 written, 0 deleted.\n` +
        '  skipped "sub\\033[2K/.git": a .git file or directory, never applied\n',
    );
    expect(existsSync(join(root, "sub\x1b[2K"))).toBe(false);
  });
});
