/**
 * Unified patches of a run's changes in git's format (`diff --git a/p b/p`, `--- a/p`, `+++ b/p`,
 * `/dev/null` for added and deleted files), so `git apply` and `patch -p1` take them. Hunks come from
 * the diff package's structuredPatch (3 lines of context).
 */
import { structuredPatch } from "diff";
import type { FileChange } from "./changes.js";

/** True when the bytes look binary: a NUL in the first 8000 bytes (git's heuristic). */
export function isBinary(bytes: Buffer | null): boolean {
  return bytes?.subarray(0, 8000).includes(0) ?? false;
}

/** The changes a patch can carry: regular files only (symlinks and other entries are reported apart). */
export function patchableChanges(changes: FileChange[]): FileChange[] {
  return changes.filter((c) => c.special === undefined);
}

function modeLine(mode: number | undefined): string {
  return (mode ?? 0o644) & 0o111 ? "100755" : "100644";
}

/** GNU convention: a hunk side with 0 lines starts at the line before it (0 for an empty file). */
function range(start: number, lines: number): string {
  return `${lines === 0 ? Math.max(0, start - 1) : start},${lines}`;
}

/** The patch text of one file change ("" for a special entry or when the contents are equal). */
export function formatFilePatch(change: FileChange): string {
  if (change.special !== undefined) return "";
  const { path } = change;
  const head = [`diff --git a/${path} b/${path}`];
  if (change.oldBytes === null) head.push(`new file mode ${modeLine(change.mode)}`);
  if (change.newBytes === null) head.push("deleted file mode 100644");
  const from = change.oldBytes === null ? "/dev/null" : `a/${path}`;
  const to = change.newBytes === null ? "/dev/null" : `b/${path}`;
  if (isBinary(change.oldBytes) || isBinary(change.newBytes)) {
    return `${[...head, `Binary files ${from} and ${to} differ`].join("\n")}\n`;
  }
  const oldText = change.oldBytes?.toString("utf8") ?? "";
  const newText = change.newBytes?.toString("utf8") ?? "";
  const patch = structuredPatch(from, to, oldText, newText, undefined, undefined, { context: 3 });
  if (patch.hunks.length === 0 && change.oldBytes !== null && change.newBytes !== null) return "";
  const lines = [...head, `--- ${from}`, `+++ ${to}`];
  for (const hunk of patch.hunks) {
    lines.push(`@@ -${range(hunk.oldStart, hunk.oldLines)} +${range(hunk.newStart, hunk.newLines)} @@`);
    lines.push(...hunk.lines);
  }
  return `${lines.join("\n")}\n`;
}

/** The whole patch: every file's patch in path order. */
export function formatPatch(changes: FileChange[]): string {
  return changes.map(formatFilePatch).join("");
}
