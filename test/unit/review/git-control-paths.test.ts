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

describe("git control paths as other host file systems read them (attack-38a)", () => {
  it("git's protectHFS and protectNTFS names are .git: ignored code points, trailing dots and spaces, streams, git~1", () => {
    const paths = [
      ".g\u200cit/config",
      "sub/\ufeff.git/hooks/post-checkout",
      ".GI\u200dT/config",
      ".git./config",
      ".git . /config",
      ".git::$INDEX_ALLOCATION/config",
      "GIT~1/config",
      "a/git~1",
    ];
    expect(paths.map(isGitControlPath)).toEqual(paths.map(() => true));
    const safe = [".gitx", "git~2", ".g_it", "x.git.", "git", ".gitignore", "git~1x", ".git~1"];
    expect(safe.map(isGitControlPath)).toEqual(safe.map(() => false));
  });
});
