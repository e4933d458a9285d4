/**
 * The recorded session's starting tree, rebuilt from the session itself (no copy of the original
 * repository). The method, deterministic and deliberately simple:
 * - The session's calls are walked in order with their recorded results. A file counts as changed
 *   from its first edit or write, or from a bash command that names its path and writes something
 *   (`sed -i`, a `>` redirect, a script that opens it, cp/mv/rm). Only what was seen of a file
 *   BEFORE it changed is used.
 * - A `read` result is the file's text: a read without offset/limit and without a truncation notice
 *   is the whole file, exactly; a partial read gives those lines at their line numbers, and its
 *   notice (Pi 0.7's '... (N more lines not shown. Use offset=M …)' or Pi 0.73's
 *   '[Showing lines A-B of T …]' / '[N more lines in file …]') gives the line count.
 * - A file's first edit result carries a numbered diff: its removed and context lines are the lines
 *   before that edit, at their old line numbers.
 * - A file known only in part is written with its known lines at their numbers, empty lines in the
 *   gaps, as many lines as the last notice counted.
 * - A file read or edited but never seen before it changed, and a file only named by a bash
 *   command or its output (ls, find, grep, tsc …) under one of the session's top-level directories,
 *   is written empty, unless an output said it does not exist; a file whose first mention is a
 *   `write` is not created (the session created it). Directories come from the paths.
 * What cannot be reconstructed exactly is the same on both sides, which is all the differential
 * comparison needs: it compares Pi and warden on one tree, not either with the original repository.
 */
import { posix } from "node:path";

/** One tool call of the session with its recorded result (if the session has one). */
export interface RecordedCall {
  name: string;
  /** Arguments with the recorded directory already rewritten to /workspace. */
  arguments: Record<string, unknown>;
  /** The recorded result's text blocks, joined; undefined when the call has no result. */
  resultText?: string;
  isError?: boolean;
  /** The recorded result's `details.diff` (edit results). */
  diff?: string;
}

const PI07_NOTICE = /\n\n\.\.\. \((\d+) more lines not shown\. Use offset=\d+ to continue reading\)$/;
const PI073_SHOWING = /\n\n\[Showing lines \d+-\d+ of (\d+)[^\]]*\]$/;
const PI073_MORE = /\n\n\[(\d+) more lines in file\. Use offset=\d+ to continue\.\]$/;
const DIFF_LINE = /^([- ]) *(\d+) (.*)$/;
const WRITES = /sed -i|open\(|(^|[^0-9&>])>\s*[^&>\s]|\b(cp|mv|rm)\s/;
const PATH_TOKEN = /(?<![\w./@~-])((?:[\w@.-]+\/)+[\w@.-]+\.[A-Za-z]\w{0,5})(?![\w/])/g;

/** What is known of one file before the session changed it. */
interface FileKnowledge {
  exact?: string;
  lines: Map<number, string>;
  total: number;
}

/** A workspace-relative path for a tool's `path` argument; undefined for paths outside /workspace or `~`. */
function relative(path: unknown): string | undefined {
  if (typeof path !== "string" || path === "" || path.startsWith("~")) return undefined;
  const rel = path.startsWith("/workspace/") ? path.slice("/workspace/".length) : path;
  if (rel.startsWith("/")) return undefined;
  const norm = posix.normalize(rel);
  return norm.startsWith("..") || norm === "." ? undefined : norm;
}

/** Places `text`'s lines from line `first` (1-based) where nothing is known yet. */
function place(k: FileKnowledge, first: number, text: string): void {
  text.split("\n").forEach((line, i) => {
    if (!k.lines.has(first + i)) k.lines.set(first + i, line);
  });
  k.total = Math.max(k.total, first + text.split("\n").length - 1);
}

/** Records a read result (see the module comment for the notices it understands). */
function learnRead(k: FileKnowledge, args: Record<string, unknown>, text: string): void {
  const offset = typeof args.offset === "number" && args.offset >= 1 ? Math.floor(args.offset) : 1;
  const notice = PI07_NOTICE.exec(text) ?? PI073_MORE.exec(text);
  const showing = PI073_SHOWING.exec(text);
  const cut = notice ?? showing;
  const shown = cut ? text.slice(0, cut.index) : text;
  if (!cut && offset === 1 && args.limit === undefined && k.exact === undefined) k.exact = shown;
  place(k, offset, shown);
  if (notice) k.total = Math.max(k.total, offset - 1 + shown.split("\n").length + Number(notice[1]));
  if (showing) k.total = Math.max(k.total, Number(showing[1]));
}

/** Records the old side of a numbered edit diff: removed and context lines at their old numbers. */
function learnDiff(k: FileKnowledge, diff: string): void {
  for (const line of diff.split("\n")) {
    const m = DIFF_LINE.exec(line);
    if (m) place(k, Number(m[2]), m[3] ?? "");
  }
}

/** Path-like tokens (dir/…/name.ext) in a bash command and its output, minus those said not to exist. */
function namedPaths(text: string): string[] {
  const missing = new Set<string>();
  for (const line of text.split("\n")) {
    if (/No such file or directory/.test(line))
      for (const m of line.matchAll(PATH_TOKEN)) missing.add(m[1] ?? "");
  }
  return [...text.matchAll(PATH_TOKEN)].map((m) => m[1] ?? "").filter((p) => !missing.has(p));
}

/** The file's starting content: exact when read whole, else its known lines with empty gaps. */
function render(k: FileKnowledge): string {
  if (k.exact !== undefined) return k.exact;
  return Array.from({ length: k.total }, (_, i) => k.lines.get(i + 1) ?? "").join("\n");
}

/**
 * The starting tree for `calls` (in session order): workspace-relative path → content. Files the
 * session created with `write` are left out; see the module comment for the method.
 */
export function sessionTree(calls: RecordedCall[]): Map<string, string> {
  const known = new Map<string, FileKnowledge>();
  const changed = new Set<string>();
  const createdBySession = new Set<string>();
  const seen = new Set<string>();
  const topDirs = new Set<string>();
  const named = new Set<string>();
  const knowledge = (path: string) => {
    const k = known.get(path) ?? { lines: new Map<number, string>(), total: 0 };
    known.set(path, k);
    return k;
  };
  const touch = (path: string, creates = false) => {
    if (!seen.has(path) && creates) createdBySession.add(path);
    seen.add(path);
  };
  for (const call of calls) {
    const path = relative(call.arguments.path);
    if (path?.includes("/")) topDirs.add(path.split("/")[0] ?? "");
    if (call.name === "read" && path) {
      touch(path);
      if (!changed.has(path) && call.resultText !== undefined && !call.isError)
        learnRead(knowledge(path), call.arguments, call.resultText);
    } else if ((call.name === "edit" || call.name === "write") && path) {
      touch(path, call.name === "write");
      if (call.name === "edit" && !changed.has(path) && call.diff) learnDiff(knowledge(path), call.diff);
      changed.add(path);
    } else if (call.name === "bash") {
      const command = String(call.arguments.command ?? "");
      for (const p of namedPaths(`${command}\n${call.resultText ?? ""}`)) {
        const rel = relative(p);
        if (!rel) continue;
        touch(rel);
        named.add(rel);
        if (WRITES.test(command) && command.includes(rel)) changed.add(rel);
      }
    }
  }
  const tree = new Map<string, string>();
  for (const path of [...seen].sort()) {
    if (createdBySession.has(path)) continue;
    const k = known.get(path);
    if (k) tree.set(path, render(k));
    else if (!named.has(path) || topDirs.has(path.split("/")[0] ?? "")) tree.set(path, "");
  }
  return tree;
}
