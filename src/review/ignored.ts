/**
 * Changes a review lists apart and never applies unless asked: paths the workspace's `.gitignore`
 * files ignore (as git reads them: each file's patterns relative to its directory, the `ignore`
 * package's gitignore rules; read from the session-start state), and any path with a `.git` component
 * at any depth (isGitControlPath).
 */
import ignore, { type Ignore } from "ignore";
import type { FileChange } from "./changes.js";
import type { HostBase } from "./host-snapshot.js";

/** Why a change is left out of the patch. */
const IGNORED_REASON = "ignored by .gitignore";
/** Why a path with a `.git` component is never applied (see isGitControlPath). */
export const GIT_DIR_REASON = "a .git file or directory, never applied";

/**
 * Code points HFS+ ignores when it compares names (git's is_hfs_dotgit, utf8.c
 * `next_hfs_char`): zero-width joiners and marks, bidi controls and the byte-order mark, so
 * `.g\u200cit` is `.git` there.
 */
const HFS_IGNORED = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g;

/**
 * True when one path component names a `.git` on some host file system, by git's own rules for
 * the names it refuses to check out (git's `verify_path`, core.protectHFS and core.protectNTFS,
 * path.c `is_hfs_dotgit` / `is_ntfs_dotgit`): `.git` in any letter case (case-insensitive file
 * systems), also with HFS+'s ignored code points inside (`.g\u200cit`), with trailing dots or
 * spaces, or an alternate data stream (`.git.`, `.git `, `.git::$INDEX_ALLOCATION`, which NTFS
 * opens as `.git`), and NTFS's short name `git~1`.
 */
function isGitComponent(part: string): boolean {
  if (part.replace(HFS_IGNORED, "").toLowerCase() === ".git") return true;
  return /^(\.git|git~1)[. ]*(:.*)?$/.test(part.toLowerCase());
}

/**
 * True when a component of `path` is `.git` as some host file system reads it (isGitComponent:
 * any letter case, HFS+'s ignored code points, NTFS's trailing dots, streams and short name): a
 * nested repository's `.git` directory or a `.git` file (`gitdir: …`) carries config and hooks that
 * git on the host would run, at any depth, not only at the top.
 */
export function isGitControlPath(path: string): boolean {
  return path.split("/").some(isGitComponent);
}

/** The reason `path` is ignored by the `.gitignore` files in `base`, or undefined. */
export function gitIgnoreMatcher(base: HostBase): (path: string) => string | undefined {
  const rules: Array<[string, Ignore]> = [];
  for (const [path, bytes] of base) {
    if (path !== ".gitignore" && !path.endsWith("/.gitignore")) continue;
    rules.push([path.slice(0, -".gitignore".length), ignore().add(bytes.toString("utf8"))]);
  }
  return (path) => {
    if (isGitControlPath(path)) return GIT_DIR_REASON;
    for (const [dir, rule] of rules)
      if (path.startsWith(dir) && path !== dir && rule.ignores(path.slice(dir.length))) return IGNORED_REASON;
    return undefined;
  };
}

/** Splits `changes` into those to review and apply, and those listed apart with their reason. */
export function splitIgnored(
  changes: FileChange[],
  reasonOf: (path: string) => string | undefined,
): { kept: FileChange[]; ignored: Array<{ path: string; reason: string }> } {
  const kept: FileChange[] = [];
  const ignored: Array<{ path: string; reason: string }> = [];
  for (const change of changes) {
    const reason = reasonOf(change.path);
    if (reason) ignored.push({ path: change.path, reason });
    else kept.push(change);
  }
  return { kept, ignored };
}
