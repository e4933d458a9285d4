/**
 * The one rule of what `warden apply` (and `warden run --apply`) writes to the host, so that what
 * applies and what a saved or exported patch carries never differ: the exporter (session-review.ts)
 * leaves out of the patch file every change this rule refuses and lists it instead, so the patch
 * a user hands to `git apply` holds nothing `warden apply` would refuse (issue 37 item 6: `git apply`
 * made the links to `/tmp/…` and `../../../../etc/shadow` a session's patch carried).
 *
 * Applied: a regular file added, changed or deleted, and a host link the session replaced by a
 * regular file or deleted (the link itself is replaced or removed, never followed: apply.ts).
 * Refused, with the reason: a link made or changed in the sandbox (warden never makes a host link),
 * a directory or other special entry, a file over the review's read limit (its patch has no
 * content), and a path with a `.git` component at any depth (ignored.ts).
 */
import type { FileChange } from "./changes.js";
import { GIT_DIR_REASON, isGitControlPath } from "./ignored.js";

/** Why an over-limit file is not applied (its patch section has no content). */
const OVERSIZE_REASON = "over the review's file size limit, not applied";

/**
 * Why `warden apply` would not apply `change`, or undefined when it applies it. Reads only
 * `path`, `special` (a link on the sandbox side, a directory, another entry: FileChange) and
 * `oversize`, so a change known only from a patch's headers can be judged before its bytes are.
 */
export function applyRefusal(change: Pick<FileChange, "path" | "special" | "oversize">): string | undefined {
  if (isGitControlPath(change.path)) return GIT_DIR_REASON;
  if (change.special !== undefined) return `${change.special} not applied`;
  if (change.oversize) return OVERSIZE_REASON;
  return undefined;
}

/**
 * `changes` split by applyRefusal: those applied, and the refused ones with their reason (same
 * order). `keepOversize`: a file too large to read stays with the applied ones (a review shows it
 * as "Binary files … differ").
 */
export function splitApplicable(
  changes: FileChange[],
  options: { keepOversize?: boolean } = {},
): {
  applicable: FileChange[];
  refused: Array<{ path: string; reason: string }>;
} {
  const applicable: FileChange[] = [];
  const refused: Array<{ path: string; reason: string }> = [];
  for (const change of changes) {
    const reason = options.keepOversize && change.oversize ? undefined : applyRefusal(change);
    if (reason === undefined) applicable.push(change);
    else refused.push({ path: change.path, reason });
  }
  return { applicable, refused };
}
