/**
 * The hunk text of one patch section (`@@ -a,b +c,d @@` headers and the `+`/`-`/space lines, each
 * ending in "\n") and its line counts. For large files the whole of it, the line diff and the text,
 * is built in a worker (issue 11: formatting the 24,000 lines of a 12,000-line rewrite on the event
 * loop, after copying the diff's 24,000 line strings back from the diff worker, took most of the
 * ~11 ms of event-loop CPU a GET /changes of three such files cost); the event loop then copies one
 * string. Small inputs, and a full pool queue or a worker out of memory, are formatted here from
 * util/line-diff.ts's hunks (with its own bounds).
 */
import {
  type DiffJob,
  diffJob,
  diffLineHunks,
  INLINE_DIFF_MAX_CHARS,
  type LineHunk,
  lazySharedPool,
  lineHunksOf,
  omitUndefined,
  runOrFallBack,
  throwIfAborted,
  workerModule,
} from "../util/index.js";

/** The hunks of a section as patch text; `text` is "" (and `hunks` 0) when the sides are equal. */
export interface HunkText {
  text: string;
  hunks: number;
  added: number;
  removed: number;
}

/** Context lines around each change in a patch (git's default). */
export const PATCH_CONTEXT_LINES = 3;

/**
 * The HunkText between `oldText` and `newText`: in the worker pool when both together are over
 * INLINE_DIFF_MAX_CHARS, else on this thread. Rejects only AbortError when `signal` fires.
 */
export async function hunkText(oldText: string, newText: string, signal?: AbortSignal): Promise<HunkText> {
  throwIfAborted(signal);
  const large = oldText.length + newText.length > INLINE_DIFF_MAX_CHARS;
  const pooled =
    large && (await runOrFallBack(hunkTextPool(), diffJob(oldText, newText, PATCH_CONTEXT_LINES), signal));
  if (pooled) return pooled;
  // Small, or the pool full or its worker out of memory: built here, with line-diff's own bounds.
  return formatHunks(
    await diffLineHunks(oldText, newText, { context: PATCH_CONTEXT_LINES, ...omitUndefined({ signal }) }),
  );
}

/**
 * The HunkText of `hunks` (pure; the worker of hunk-text-worker.ts runs it too). A side with 0 lines starts at the line before it, as
 * GNU diff writes it (0 for an empty file).
 */
export function formatHunks(hunks: LineHunk[]): HunkText {
  const lines: string[] = [];
  let added = 0;
  let removed = 0;
  for (const hunk of hunks) {
    lines.push(`@@ -${range(hunk.oldStart, hunk.oldLines)} +${range(hunk.newStart, hunk.newLines)} @@`);
    for (const line of hunk.lines) {
      if (line[0] === "+") added++;
      else if (line[0] === "-") removed++;
      lines.push(line);
    }
  }
  return { text: lines.length === 0 ? "" : `${lines.join("\n")}\n`, hunks: hunks.length, added, removed };
}

function range(start: number, lines: number): string {
  return `${lines === 0 ? Math.max(0, start - 1) : start},${lines}`;
}

/**
 * The HunkText between `oldText` and `newText` as the pool's worker builds it, on this thread:
 * lineHunksOf with diffJob's bounds, then formatHunks. For code already off the event loop (the
 * patch worker, patch-bytes-worker.ts).
 */
export function hunkTextOf(oldText: string, newText: string): HunkText {
  return formatHunks(lineHunksOf(diffJob(oldText, newText, PATCH_CONTEXT_LINES)));
}

/** The process-wide patch-hunk pool (lazySharedPool), 32 queued jobs; exported for tests. */
export const hunkTextPool = lazySharedPool<DiffJob, HunkText>(
  workerModule(import.meta.url, "hunk-text-worker"),
  32,
);
