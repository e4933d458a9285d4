/** Review: a path with a `.git` component at any depth (any letter case) is never applied. */
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  applyChanges,
  GIT_DIR_REASON,
  gitIgnoreMatcher,
  isGitControlPath,
} from "../../../src/review/index.js";
import { addedFile } from "../../helpers/file-change.js";

describe("git control paths", () => {
  it("finds a .git component at any depth, any case", () => {
    const paths = [".git", ".git/config", "sub/.git", "nested/.git/hooks/post-checkout", "a/.GIT/x", ".Git"];
    expect(paths.map(isGitControlPath)).toEqual([true, true, true, true, true, true]);
    const safe = [".gitignore", "sub/.gitmodules", "x.git", "cfgdir/HEAD", ".github/workflows/ci.yml", "git"];
    expect(safe.map(isGitControlPath)).toEqual([false, false, false, false, false, false]);
  });

  it("the review lists nested .git paths apart", () => {
    const reason = gitIgnoreMatcher(new Map());
    expect(["sub/.git", "nested/.git/hooks/post-checkout", "Sub/.Git/config", "ok.txt"].map(reason)).toEqual([
      GIT_DIR_REASON,
      GIT_DIR_REASON,
      GIT_DIR_REASON,
      undefined,
    ]);
  });

  it("apply skips every .git path with its reason and writes the rest", async () => {
    const root = mkdtempSync(join(tmpdir(), "warden-gitctl-"));
    const result = await applyChanges(root, [
      addedFile("sub/.git", "gitdir: ../cfgdir\n"),
      addedFile("nested/.git/hooks/post-checkout", "touch /tmp/x\n"),
      addedFile("up/.GIT/config", "[core]\n"),
      addedFile(".git/config", "[core]\n"),
      addedFile("ok.txt", "fine\n"),
    ]);
    expect(GIT_DIR_REASON).toBe("a .git file or directory, never applied");
    expect(result).toEqual({
      written: ["ok.txt"],
      deleted: [],
      merged: [],
      skipped: [
        { path: "sub/.git", reason: GIT_DIR_REASON },
        { path: "nested/.git/hooks/post-checkout", reason: GIT_DIR_REASON },
        { path: "up/.GIT/config", reason: GIT_DIR_REASON },
        { path: ".git/config", reason: GIT_DIR_REASON },
      ],
    });
    expect(readdirSync(root)).toEqual(["ok.txt"]);
    expect(readFileSync(join(root, "ok.txt"), "utf8")).toBe("fine\n");
    expect(existsSync(join(root, "sub"))).toBe(false);
  });
});
