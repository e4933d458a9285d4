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
  LINE_HUNKS_WORKER_LIB,
  type LineHunk,
  lazySharedPool,
  omitUndefined,
  runOrFallBack,
  throwIfAborted,
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
 * The HunkText of `hunks` (pure; also run in the worker by its source text, so it uses nothing from
 * outside but its argument and `range` below). A side with 0 lines starts at the line before it, as
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
 * CommonJS text for a worker: defines `formatHunks` and `hunkTextOf(oldText, newText)`, the HunkText
 * of one section as the pool path of hunkText builds it (line-diff's lineHunksOf with diffJob's bounds).
 */
export const HUNK_TEXT_WORKER_LIB = `
${LINE_HUNKS_WORKER_LIB}
${range.toString()}
${formatHunks.toString()}
const HUNK_JOB = ${JSON.stringify(diffJob("", "", PATCH_CONTEXT_LINES))};
function hunkTextOf(oldText, newText) {
  return formatHunks(lineHunksOf({ ...HUNK_JOB, oldText, newText }));
}
`;

// The worker: one section's hunks (line-diff's lineHunksOf) and their text (formatHunks) per message.
const WORKER_SOURCE = `
${HUNK_TEXT_WORKER_LIB}
parentPort.on("message", (job) => {
  try {
    parentPort.postMessage({ ok: true, value: formatHunks(lineHunksOf(job)) });
  } catch (err) {
    parentPort.postMessage({ ok: false, message: String((err && err.message) || err) });
  }
});
`;

/** The process-wide patch-hunk pool (lazySharedPool), 32 queued jobs; exported for tests. */
export const hunkTextPool = lazySharedPool<DiffJob, HunkText>(WORKER_SOURCE, 32);
