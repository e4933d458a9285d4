/**
 * No silent loss of work: a copy-mode `warden exec`, `replay` or `mcp` session that changed files
 * saves its change when it ends, as `warden run` does: the patch (against the session-start state,
 * its first line recording the workspace) and the base store beside it, in
 * `$WARDEN_HOME/runs/<time>-<session>.patch` (agent's sessionPatchPathFor), and says where on
 * stderr, with the `warden diff` and `warden apply` commands that take it. The host is never written.
 * The patch carries only what `warden apply` applies (review/apply-rule.ts): each change left out
 * (a link made in the sandbox, git-ignored…) is named on stderr with its reason and listed in the
 * sidecar `<patch>.left-out.json`.
 */
import { sessionPatchPathFor } from "../../agent/index.js";
import {
  finishReview,
  leftOutOf,
  leftOutPath,
  quotePath,
  type ReviewStart,
  saveSessionPatch,
  startReview,
} from "../../review/index.js";
import type { Session, SessionOptions } from "../../session/index.js";

/** How long reading the change of a session whose work was interrupted may take, in ms. */
const COLLECT_AFTER_ABORT_MS = 60_000;

/**
 * The session-start state of `options`' workspace when it is copy mode (undefined otherwise): call
 * it before the session is created, since the sandbox copies the workspace then.
 */
export function startSessionPatch(options: SessionOptions): Promise<ReviewStart | undefined> {
  return startReview(options.sandbox?.workspace, options.signal);
}

/**
 * Reads the session's change (before it closes) and, when files changed, saves the patch and says
 * where on stderr (`write`, default process.stderr). Returns the patch path, or undefined when
 * nothing changed or there is no copy-mode workspace. Never rejects: a failure is reported on
 * stderr (the session must still close). `signal`: the command's; once aborted, the read gets its
 * own bound (COLLECT_AFTER_ABORT_MS).
 */
export async function saveSessionChanges(
  session: Session,
  start: ReviewStart | undefined,
  signal?: AbortSignal,
  write: (text: string) => void = (text) => process.stderr.write(text),
): Promise<string | undefined> {
  if (!start) return undefined;
  try {
    const collect = !signal || signal.aborted ? AbortSignal.timeout(COLLECT_AFTER_ABORT_MS) : signal;
    const review = await finishReview(session.sandbox, start, { signal: collect });
    const left = leftOutOf(review);
    for (const i of left)
      write(`warden: left out of the patch, never applied: ${quotePath(i.path)} (${i.reason})\n`);
    if (review.changes.length === 0) return undefined;
    const n = review.changes.length;
    const changed = `warden: the session changed ${n} file${n === 1 ? "" : "s"} in its copy of ${review.hostRoot} (the host is untouched)`;
    if (review.patch === "") {
      write(`${changed}; none of it can be applied (listed above), so no patch was saved\n`);
      return undefined;
    }
    const path = sessionPatchPathFor(session.id);
    await saveSessionPatch(path, review);
    const listed =
      left.length > 0 ? `; ${left.length} change(s) left out of it are listed in ${leftOutPath(path)}` : "";
    write(
      `${changed}; patch saved to ${path} (show it: warden diff ${path}; apply it: warden apply ${path})${listed}\n`,
    );
    return path;
  } catch (err) {
    write(
      `warden: the session's changes could not be saved (${err instanceof Error ? err.message : String(err)}); they are lost with the sandbox\n`,
    );
    return undefined;
  }
}
