/**
 * The worker module of line-diff.ts's pool (worker-pool.ts): one DiffJob in, its hunks
 * (lineHunksOf, with the job's edit-length and time bounds) out.
 */
import { type DiffJob, type LineHunk, lineHunksOf } from "./line-diff.js";

/** The hunks of `job` (see lineHunksOf). */
export function runJob(job: DiffJob): LineHunk[] {
  return lineHunksOf(job);
}
