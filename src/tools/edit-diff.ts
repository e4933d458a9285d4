/**
 * Diffs for the edit tool's details, built on the `diff` package (jsdiff):
 * a display diff in Pi's shape (`+N line`, `-N line`, ` N line`, ` ... ` between hunks, line numbers
 * padded to one width, 4 context lines) and a standard unified patch. The line diff itself is
 * util/line-diff.ts, bounded (a rewrite too large to diff in time is shown as one replacement hunk
 * of the changed region). For large inputs the whole of it, the line diff and both texts, is built
 * in a worker (issue 11: formatting a 12,000-line rewrite's two texts took about 15 ms of the event
 * loop per edit).
 */
import { formatPatch } from "diff";
import {
  type DiffJob,
  diffJob,
  diffLineHunks,
  INLINE_DIFF_MAX_CHARS,
  type LineHunk,
  lazySharedPool,
  omitUndefined,
  runOrFallBack,
  throwIfAborted,
  workerModule,
} from "../util/index.js";

/** Context lines around each change, as in Pi's edit tool. */
export const DIFF_CONTEXT_LINES = 4;

/** The diffs of one edit; both compare LF-normalised text without BOM. */
export interface EditDiff {
  /** Display diff: one line per shown line, `+`/`-`/space, padded line number, space, text. */
  diff: string;
  /** Unified patch (`--- a/path`, `+++ b/path`, `@@` hunks) from jsdiff. */
  patch: string;
  /** 1-based line of the first change in the new file; undefined when nothing changed. */
  firstChangedLine: number | undefined;
}

/**
 * Builds the display diff and unified patch between `oldText` and `newText` (LF text) for `path`:
 * inline for small inputs, in the worker pool for larger ones (inline again when its queue is full).
 * Rejects only AbortError when `signal` fires.
 */
export async function buildEditDiff(
  path: string,
  oldText: string,
  newText: string,
  signal?: AbortSignal,
): Promise<EditDiff> {
  throwIfAborted(signal);
  if (oldText.length + newText.length > INLINE_DIFF_MAX_CHARS) {
    const job: EditDiffJob = { path, diff: diffJob(oldText, newText, DIFF_CONTEXT_LINES) };
    const built = await runOrFallBack(editDiffPool(), job, signal);
    if (built) return built;
    // Pool full or worker out of memory: built here, with line-diff's own bounds.
  }
  const hunks = await diffLineHunks(oldText, newText, {
    context: DIFF_CONTEXT_LINES,
    ...omitUndefined({ signal }),
  });
  return formatEditDiff(path, oldText, newText, hunks, formatPatch);
}

/**
 * The EditDiff of `hunks` (pure; the worker of edit-diff-worker.ts runs it too; `patchOf` is
 * jsdiff's formatPatch).
 */
export function formatEditDiff(
  path: string,
  oldText: string,
  newText: string,
  hunks: LineHunk[],
  patchOf: typeof formatPatch,
): EditDiff {
  const structured = {
    oldFileName: `a/${path}`,
    newFileName: `b/${path}`,
    oldHeader: undefined,
    newHeader: undefined,
    hunks,
  };
  const patch = patchOf(structured, {
    includeIndex: false,
    includeUnderline: false,
    includeFileHeaders: true,
  });
  const width = String(Math.max(countLines(oldText), countLines(newText))).length;
  const ellipsis = ` ${"".padStart(width, " ")} ...`;
  const out: string[] = [];
  let firstChangedLine: number | undefined;
  let oldEnd = 0;
  for (const hunk of structured.hunks) {
    // oldStart is 0 for a hunk in an empty file; line numbers below are 1-based.
    const oldStart = Math.max(hunk.oldStart, 1);
    if (oldStart > oldEnd + 1) out.push(ellipsis);
    let oldLine = oldStart;
    let newLine = Math.max(hunk.newStart, 1);
    for (const line of hunk.lines) {
      const mark = line[0];
      const text = line.slice(1);
      if (mark === "\\") continue; // "\ No newline at end of file"
      if (mark === "+") {
        firstChangedLine ??= newLine;
        out.push(`+${pad(newLine++, width)} ${text}`);
      } else if (mark === "-") {
        firstChangedLine ??= newLine;
        out.push(`-${pad(oldLine++, width)} ${text}`);
      } else {
        out.push(` ${pad(oldLine++, width)} ${text}`);
        newLine++;
      }
    }
    oldEnd = oldLine - 1;
  }
  if (structured.hunks.length > 0 && oldEnd < countLines(oldText)) out.push(ellipsis);
  return { diff: out.join("\n"), patch, firstChangedLine };
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, " ");
}

/** Number of lines in LF text; a final newline does not start another line. */
function countLines(text: string): number {
  if (text === "") return 0;
  const n = text.split("\n").length;
  return text.endsWith("\n") ? n - 1 : n;
}

/** One edit's diff for the pool's worker (edit-diff-worker.ts): the file's path and its DiffJob. */
export interface EditDiffJob {
  path: string;
  diff: DiffJob;
}

/** The process-wide edit-diff pool (lazySharedPool), 32 queued jobs; exported for tests. */
export const editDiffPool = lazySharedPool<EditDiffJob, EditDiff>(
  workerModule(import.meta.url, "edit-diff-worker"),
  32,
);
