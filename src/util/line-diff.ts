/**
 * Line diffs that never hold the event loop: jsdiff's `structuredPatch` (Myers; its time grows with
 * the square of the edit length D) runs inline only for small inputs with a tight edit bound;
 * larger inputs go whole to a bounded WorkerPool (the line split, the count below, the diff with a
 * time bound, the fallback hunk), so the event loop only copies the result. No diff is tried at all
 * when a linear count shows D over MAX_DIFF_EDIT_LINES. When a bound is exceeded (that count, the
 * diff timeout, the pool queue full, a worker out of memory) the
 * result is a whole-region replacement hunk instead: common leading and trailing lines are kept as
 * context, everything between is removed and added. That is still a correct patch (`git apply`
 * takes it), only not minimal. Hunks use jsdiff's shape and conventions (`oldStart` 1-based, a
 * `\ No newline at end of file` line after a last line without newline).
 */

import { structuredPatch } from "diff";
import { isAbortError, throwIfAborted } from "./abort.js";
import { omitUndefined } from "./omit-undefined.js";
import { lazySharedPool } from "./worker-pool.js";
import { workerModule } from "./worker-process.js";

/** One hunk, as jsdiff's structuredPatch gives it. */
export interface LineHunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  lines: string[];
}

/** Inputs up to this many UTF-16 units (both sides together) are diffed on the calling thread. */
export const INLINE_DIFF_MAX_CHARS = 32 * 1024;
/** Inline diffs give up (and go to the pool) beyond this edit length (lines added plus removed). */
const INLINE_MAX_EDIT_LENGTH = 64;
/** A pool diff gives up after this many ms and the whole-region hunk is used. */
const DIFF_TIMEOUT_MS = 1000;
/**
 * Lines of one side with no equal line left on the other (a lower bound of D, counted in linear
 * time) above which no Myers diff is tried (1,000 such lines take about 0.3 s of CPU in jsdiff).
 */
const MAX_DIFF_EDIT_LINES = 1000;

const NO_NEWLINE = "\\ No newline at end of file";

/**
 * The hunks of one DiffJob, all of a large diff as the pool's worker (line-diff-worker.ts) does it
 * off the event loop: the lines, the linear count of unmatched lines, then jsdiff's structuredPatch
 * within the job's time bound, or the whole-region hunk when the count is over the bound or the diff
 * timed out. Other workers that need hunks (the edit tool's display diff, a patch's hunk text) call
 * it too.
 */
export function lineHunksOf(job: DiffJob): LineHunk[] {
  const a = splitLines(job.oldText);
  const b = splitLines(job.newText);
  let hunks: LineHunk[] | undefined;
  if (unmatchedLines(a, b) <= job.maxEditLines) {
    hunks = structuredPatch("a", "b", job.oldText, job.newText, undefined, undefined, {
      context: job.context,
      timeout: job.timeoutMs,
    })?.hunks;
  }
  return hunks ?? wholeRegionOfLines(a, b, job.context);
}

/** One diff for lineHunksOf (in the pool's worker, line-diff-worker.ts). */
export interface DiffJob {
  oldText: string;
  newText: string;
  context: number;
  timeoutMs: number;
  maxEditLines: number;
}

/** The process-wide diff pool (lazySharedPool), 32 queued jobs; exported for tests. */
export const diffPool = lazySharedPool<DiffJob, LineHunk[]>(
  workerModule(import.meta.url, "line-diff-worker"),
  32,
);

/** The DiffJob of a pool diff, with this module's bounds. */
export function diffJob(oldText: string, newText: string, context: number): DiffJob {
  return { oldText, newText, context, timeoutMs: DIFF_TIMEOUT_MS, maxEditLines: MAX_DIFF_EDIT_LINES };
}

/**
 * The hunks between `oldText` and `newText` with `context` lines around each change (empty when
 * equal). Rejects only AbortError when `signal` fires; every bound falls back to wholeRegionHunks.
 */
export async function diffLineHunks(
  oldText: string,
  newText: string,
  options: { context: number; signal?: AbortSignal },
): Promise<LineHunk[]> {
  throwIfAborted(options.signal);
  if (oldText === newText) return [];
  if (oldText.length + newText.length <= INLINE_DIFF_MAX_CHARS) {
    const oldLines = splitLines(oldText);
    const newLines = splitLines(newText);
    if (unmatchedLines(oldLines, newLines) > MAX_DIFF_EDIT_LINES) {
      return wholeRegionOfLines(oldLines, newLines, options.context);
    }
    const patch = structuredPatch("a", "b", oldText, newText, undefined, undefined, {
      context: options.context,
      maxEditLength: INLINE_MAX_EDIT_LENGTH,
    });
    if (patch !== undefined) return patch.hunks;
  }
  // Larger inputs: even the linear count and the whole-region hunk run in the pool (for a
  // 12,000-line rewrite they took about 17 ms of the event loop per diff).
  try {
    return await diffPool().run(
      diffJob(oldText, newText, options.context),
      omitUndefined({ signal: options.signal }),
    );
  } catch (err) {
    if (isAbortError(err)) throw err;
    // Pool full or worker out of memory: the bounded fallback below.
  }
  throwIfAborted(options.signal);
  return wholeRegionHunks(oldText, newText, options.context);
}

/** Lines with their "\n" kept (the last one may lack it). */
function splitLines(text: string): string[] {
  const lines: string[] = [];
  for (let at = 0; at < text.length; ) {
    const end = text.indexOf("\n", at);
    const next = end === -1 ? text.length : end + 1;
    lines.push(text.slice(at, next));
    at = next;
  }
  return lines;
}

/** Lines of `a` and `b` with no equal line left on the other side (multiset difference); O(n). */
function unmatchedLines(a: readonly string[], b: readonly string[]): number {
  const counts = new Map<string, number>();
  for (const line of a) counts.set(line, (counts.get(line) ?? 0) + 1);
  let unmatched = 0;
  for (const line of b) {
    const left = counts.get(line);
    if (left) counts.set(line, left - 1);
    else unmatched++;
  }
  for (const left of counts.values()) unmatched += left;
  return unmatched;
}

/**
 * One hunk replacing everything between the common leading and trailing lines (linear time), with
 * up to `context` of those lines around it; [] when the texts are equal.
 */
export function wholeRegionHunks(oldText: string, newText: string, context: number): LineHunk[] {
  if (oldText === newText) return [];
  return wholeRegionOfLines(splitLines(oldText), splitLines(newText), context);
}

function wholeRegionOfLines(a: readonly string[], b: readonly string[], context: number): LineHunk[] {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  )
    tail++;
  const before = Math.min(context, head);
  const after = Math.min(context, tail);
  const lines: string[] = [];
  const push = (mark: string, line: string) => {
    if (line.endsWith("\n")) lines.push(mark + line.slice(0, -1));
    else lines.push(mark + line, NO_NEWLINE);
  };
  for (const line of a.slice(head - before, head)) push(" ", line);
  for (const line of a.slice(head, a.length - tail)) push("-", line);
  for (const line of b.slice(head, b.length - tail)) push("+", line);
  for (const line of a.slice(a.length - tail, a.length - tail + after)) push(" ", line);
  return [
    {
      oldStart: head - before + 1,
      oldLines: before + (a.length - tail - head) + after,
      newStart: head - before + 1,
      newLines: before + (b.length - tail - head) + after,
      lines,
    },
  ];
}
