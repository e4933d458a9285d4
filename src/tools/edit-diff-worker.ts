/**
 * The worker module of edit-diff.ts's pool (util/worker-pool.ts): one edit in, its hunks (util's
 * lineHunksOf, with the job's bounds) and both texts (formatEditDiff, jsdiff's formatPatch) out.
 */
import { formatPatch } from "diff";
import { lineHunksOf } from "../util/index.js";
import { type EditDiff, type EditDiffJob, formatEditDiff } from "./edit-diff.js";

/** The EditDiff of `job`. */
export function runJob(job: EditDiffJob): EditDiff {
  const { path, diff } = job;
  return formatEditDiff(path, diff.oldText, diff.newText, lineHunksOf(diff), formatPatch);
}
