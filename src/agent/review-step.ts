/**
 * The end of a copy-mode `warden run`: the summary (files changed, diffstat), the patch saved next to
 * the transcript (`<transcript>.patch`, what `warden diff` shows), `--export-patch FILE`, and
 * `--apply` (after confirmation or `--yes`; refused without a terminal to ask on). Beside the saved
 * patch, `<patch>.base/` keeps the session-start version of each changed file, so `warden apply` can
 * merge the patch later with host edits made meanwhile; the saved patch's first line records the
 * workspace (path, device, inode: review/workspace-record.ts), which `warden apply` applies it to.
 * The exported patch is the plain patch, without that line. Both carry only what `warden apply`
 * applies (review/apply-rule.ts); what is left out is listed in the review and in
 * `<patch>.left-out.json` beside each.
 */
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import pc from "picocolors";
import {
  type ApplyResult,
  applyChanges,
  formatDiffstat,
  leftOutOf,
  leftOutPath,
  MergeConflictError,
  quotePath,
  saveLeftOut,
  saveSessionPatch,
} from "../review/index.js";
import type { RunReview } from "./run-session.js";

/** Options of reviewStep. `confirm` is undefined when there is no terminal to ask on. */
export interface ReviewStepOptions {
  review: RunReview;
  transcriptPath: string;
  exportPatch?: string;
  apply?: boolean;
  yes?: boolean;
  confirm?: (question: string) => Promise<boolean>;
  /** Prints one block of human text. */
  say: (text: string) => void;
  colour?: boolean;
  /** The run was interrupted: the changes so far are saved, never applied. */
  interrupted?: boolean;
}

/** What happened. `refused` says why --apply did not apply (exit code 1). */
export interface ReviewStepOutcome {
  files: number;
  savedPatch?: string;
  exportedPatch?: string;
  applied?: ApplyResult;
  refused?: string;
}

/** The patch file saved alongside a transcript. */
export function patchPathFor(transcriptPath: string): string {
  return `${transcriptPath}.patch`;
}

/** Runs the review step (see module doc). Never throws for a refusal; fs errors propagate. */
export async function reviewStep(options: ReviewStepOptions): Promise<ReviewStepOutcome> {
  const { review, say } = options;
  const c = pc.createColors(options.colour ?? false);
  const outcome: ReviewStepOutcome = { files: review.changes.length };
  if (review.ignored.length > 0) {
    say("Left out of the patch, never applied (--include-ignored keeps git-ignored ones):");
    for (const i of review.ignored) say(`  ${quotePath(i.path)} (${i.reason})`);
  }
  if (review.refused.length > 0) {
    say("Left out of the patch, never applied (warden apply refuses them):");
    for (const i of review.refused) say(`  ${quotePath(i.path)} (${i.reason})`);
  }
  if (review.changes.length === 0) {
    say("No files changed in the sandbox; the host workspace is untouched.");
    return outcome;
  }
  say(
    options.interrupted
      ? `Interrupted. Changes made in the sandbox so far (the host workspace ${review.hostRoot} is untouched):`
      : `Changes made in the sandbox (the host workspace ${review.hostRoot} is untouched):`,
  );
  say(formatDiffstat(review.stat, c).trimEnd());
  if (review.patch === "") {
    say("None of these changes can be applied (listed above); no patch saved.");
    return outcome;
  }
  const left = leftOutOf(review).length;
  const listed = (patch: string) =>
    left > 0 ? `; ${left} change(s) left out of it are listed in ${leftOutPath(patch)}` : "";
  const saved = patchPathFor(options.transcriptPath);
  await saveSessionPatch(saved, review);
  outcome.savedPatch = saved;
  say(`Patch saved to ${saved} (show it again: warden diff ${options.transcriptPath})${listed(saved)}`);
  if (options.exportPatch) {
    const target = resolve(options.exportPatch);
    writeFileSync(target, review.patch);
    await saveLeftOut(target, review);
    outcome.exportedPatch = target;
    say(`Patch exported to ${target} (apply later with: git apply ${target})${listed(target)}`);
  }
  const later = `warden apply ${options.transcriptPath}`;
  if (!options.apply || options.interrupted) {
    say(`Not applied. Apply it later with: ${later} (a three-way merge with any edits you make meanwhile).`);
    return outcome;
  }
  if (!options.yes) {
    if (!options.confirm) {
      outcome.refused =
        "--apply needs confirmation and there is no terminal to ask on; add --yes to apply anyway.";
      say(`Not applied: ${outcome.refused}`);
      return outcome;
    }
    const ok = await options.confirm(
      `Apply ${review.changes.length} changed file(s) to ${review.hostRoot}? [y/N] `,
    );
    if (!ok) {
      outcome.refused = "not confirmed.";
      say("Not applied: not confirmed.");
      return outcome;
    }
  }
  try {
    outcome.applied = await applyChanges(review.hostRoot, review.changes);
  } catch (err) {
    if (!(err instanceof MergeConflictError)) throw err;
    outcome.refused = err.message;
    say(err.message.replace("with `warden apply`", `with: ${later}`));
    return outcome;
  }
  const { written, deleted, merged, skipped } = outcome.applied;
  say(`Applied to ${review.hostRoot}: ${written.length} written, ${deleted.length} deleted.`);
  // Names come from the sandbox: quoted as git quotes them, so no escape sequence reaches the terminal.
  if (merged.length > 0) say(`  merged with your edits made meanwhile: ${merged.map(quotePath).join(", ")}`);
  for (const s of skipped) say(`  skipped ${quotePath(s.path)}: ${s.reason}`);
  return outcome;
}
