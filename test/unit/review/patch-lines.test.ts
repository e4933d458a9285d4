/**
 * attack-38a: `warden apply` reads a patch's lines as git does, split at `\n` only. It used
 * JavaScript's multiline `^`/`$`, which also end a line at `\r`, U+2028 and U+2029: a file the
 * session wrote whose content held `\rdiff --git a/ln b/ln\rdeleted file mode 120000\r…` became a
 * section of its own, and `warden apply` removed the host link `ln`, which the session never
 * touched, wrote the session's file without those bytes, and counted 3 files where git sees 1.
 */
import {
  lstatSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { runApply } from "../../../src/cli/commands/apply.js";
import {
  type FileChange,
  formatPatch,
  readWorkspaceHeader,
  saveBaseStore,
  splitPatch,
} from "../../../src/review/index.js";

/** A file whose lines, split as JavaScript's multiline regexes split them, forge three sections. */
const forged =
  "line1\rdiff --git a/ln b/ln\rdeleted file mode 120000\r" +
  "diff --git a/README.md b/README.md\rnew file mode 100000\n" +
  "line2\u2028diff --git a/README.md b/README.md\u2029index 0000000000000000000000000000000000000000..0000000000000000000000000000000000000000\n" +
  "end\n";

describe("warden apply reads a patch's lines as git does", () => {
  afterEach(() => {
    process.exitCode = undefined;
    vi.restoreAllMocks();
  });

  it("a \\r, U+2028 or U+2029 in a file's content starts no section: only the session's file is applied, byte for byte", async () => {
    const root = mkdtempSync(join(tmpdir(), "warden-patch-lines-"));
    writeFileSync(join(root, "README.md"), "hello\n", { mode: 0o644 });
    symlinkSync("README.md", join(root, "ln"));
    const change: FileChange = {
      path: "evil.txt",
      kind: "added",
      oldBytes: null,
      newBytes: Buffer.from(forged),
      mode: 0o644,
    };
    const patch = join(mkdtempSync(join(tmpdir(), "warden-runs-")), "r.jsonl.patch");
    writeFileSync(patch, await formatPatch([change]));
    await saveBaseStore(patch, [change]);
    const text = readFileSync(patch, "utf8");
    expect(splitPatch(text).map((s) => [s.path, s.skip, s.newMode, s.fromLink])).toEqual([
      ["evil.txt", undefined, 0o644, undefined],
    ]);
    const out = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    await runApply(patch, { workspace: root });
    expect(process.exitCode).toBeUndefined();
    expect(out.mock.calls.map((c) => String(c[0])).join("")).toBe(
      `Applied ${patch} to ${root}: 1 written, 0 deleted.\n`,
    );
    expect(readFileSync(join(root, "evil.txt"), "utf8")).toBe(forged);
    expect(lstatSync(join(root, "ln")).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(root, "ln"))).toBe("README.md");
    expect(statSync(join(root, "README.md")).mode & 0o777).toBe(0o644);
    expect(readFileSync(join(root, "README.md"), "utf8")).toBe("hello\n");
  });

  it("the workspace record is read before the first diff --git line at a \\n, not at a \\r", () => {
    const record = 'warden-workspace: {"path":"/w","dev":"1","ino":"2"}';
    expect(readWorkspaceHeader(`x\rdiff --git a/a b/a\n${record}\ndiff --git a/b b/b\n`)).toEqual({
      path: "/w",
      dev: "1",
      ino: "2",
    });
    expect(readWorkspaceHeader(`diff --git a/b b/b\n${record}\n`)).toBeUndefined();
  });
});
