/**
 * The worker module of patch-hunks.ts's pool (util/worker-pool.ts): one section's DiffJob in, its
 * hunks (util's lineHunksOf, with the job's bounds) as patch text (formatHunks) out.
 */
import { type DiffJob, lineHunksOf } from "../util/index.js";
import { formatHunks, type HunkText } from "./patch-hunks.js";

/** The HunkText of `job`. */
export function runJob(job: DiffJob): HunkText {
  return formatHunks(lineHunksOf(job));
}
