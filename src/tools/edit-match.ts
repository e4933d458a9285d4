/**
 * Pure matching logic of the edit tool (no I/O). Follows Pi's edit semantics
 * (shared/reference/pi-tool-semantics.md): BOM stripped, end of line detected from the first newline,
 * CRLF/CR normalised to LF for matching, every edit matched against the ORIGINAL text, exact match
 * first, then fuzzy on oldText only (files up to MAX_FUZZY_MATCH_CHARS), uniqueness counted, overlaps
 * refused, identical result refused.
 *
 * Unlike Pi, the file is never rewritten in normalised form: matches map back to the original
 * characters, so bytes outside the replaced ranges (their line endings included, in a mixed-EOL file)
 * stay exactly as they were, and a fuzzy match replaces only the original span it covers.
 */
import { fuzzyIndex, normalizeForFuzzyMatch, toLf } from "./edit-normalize.js";

/** One replacement: `oldText` must occur exactly once in the file; `newText` replaces it. */
export interface EditSpec {
  oldText: string;
  newText: string;
}

/** The line ending a file is written with: the one of its first newline (LF when it has none). */
export type LineEnding = "\r\n" | "\n";

/** Where one edit matched, in UTF-16 offsets of the original text (BOM excluded). */
interface EditMatch {
  /** Index of the edit in the call's `edits` array. */
  index: number;
  start: number;
  end: number;
  /** True when only the fuzzy comparison (quotes, dashes, spaces, trailing blanks, NFKC) matched. */
  fuzzy: boolean;
}

/** Why a not-found oldText probably failed, when a cheap check can tell. */
export type NotFoundHint =
  /** The lines exist with other indentation: the file uses tabs where oldText has spaces. */
  | { kind: "file-uses-tabs"; line: number }
  /** The lines exist with other indentation: the file uses spaces where oldText has tabs. */
  | { kind: "file-uses-spaces"; line: number }
  /** The lines exist with other indentation (same characters, other widths). */
  | { kind: "indentation"; line: number }
  /** The file is over MAX_FUZZY_MATCH_CHARS: no fuzzy match was tried. */
  | { kind: "exact-only"; limitChars: number };

/**
 * Largest file (UTF-16 units) matched fuzzily: the fuzzy normal form is built unit by unit with an
 * offset map, ~0.1-0.4 s per MiB on the event loop, so larger files get exact matching only.
 */
export const MAX_FUZZY_MATCH_CHARS = 1024 * 1024;

/** Why the edits could not be applied. `index` values refer to the call's `edits` array. */
export type EditFailure =
  | { kind: "empty-old-text"; index: number }
  | { kind: "not-found"; index: number; hint: NotFoundHint | null }
  | { kind: "ambiguous"; index: number; count: number }
  | { kind: "overlap"; first: number; second: number }
  | { kind: "no-change" };

/** The edited file: `text` is what to write (BOM included when the original had one). */
interface EditSuccess {
  ok: true;
  text: string;
  /** Original text with LF line endings and no BOM, for the diff. */
  oldLf: string;
  /** New text with LF line endings and no BOM, for the diff. */
  newLf: string;
  bom: boolean;
  eol: LineEnding;
  matches: EditMatch[];
}

export type EditApplyResult = EditSuccess | { ok: false; failure: EditFailure };

const BOM = "\uFEFF";

/** The end of line of the first newline in `text` (CRLF, or LF for a lone LF or CR or none). */
export function detectLineEnding(text: string): LineEnding {
  const i = text.search(/[\r\n]/);
  if (i === -1) return "\n";
  return text[i] === "\r" && text[i + 1] === "\n" ? "\r\n" : "\n";
}

/** Counts non-overlapping occurrences of a non-empty `needle` in `haystack`. */
export function countOccurrences(haystack: string, needle: string): number {
  if (needle === "") return 0;
  let count = 0;
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + needle.length)) count++;
  return count;
}

/**
 * Applies `edits` to `original` (the decoded file, possibly starting with a BOM).
 * Returns the new text, or the first failure in edit order (empty oldText, not found with a hint,
 * ambiguous with its count), then overlap (naming both edits), then no-change.
 */
export function applyEdits(original: string, edits: readonly EditSpec[]): EditApplyResult {
  const bom = original.startsWith(BOM);
  const raw = bom ? original.slice(1) : original;
  const eol = detectLineEnding(raw);
  const file = toLf(raw);
  let fuzzy: ReturnType<typeof normalizeForFuzzyMatch> | undefined;

  const matches: EditMatch[] = [];
  for (const [index, edit] of edits.entries()) {
    const oldText = toLf(edit.oldText).text;
    if (oldText === "") return fail({ kind: "empty-old-text", index });
    const exactCount = countOccurrences(file.text, oldText);
    if (exactCount > 1) return fail({ kind: "ambiguous", index, count: exactCount });
    if (exactCount === 1) {
      const at = file.text.indexOf(oldText);
      matches.push({
        index,
        start: file.rawStart(at),
        end: file.rawStart(at + oldText.length),
        fuzzy: false,
      });
      continue;
    }
    if (file.text.length > MAX_FUZZY_MATCH_CHARS) {
      const hint = indentationHint(file.text, oldText) ?? {
        kind: "exact-only",
        limitChars: MAX_FUZZY_MATCH_CHARS,
      };
      return fail({ kind: "not-found", index, hint });
    }
    fuzzy ??= normalizeForFuzzyMatch(file.text);
    const needle = normalizeForFuzzyMatch(oldText).text;
    const fuzzyCount = countOccurrences(fuzzy.text, needle);
    if (fuzzyCount > 1) return fail({ kind: "ambiguous", index, count: fuzzyCount });
    if (fuzzyCount === 0)
      return fail({ kind: "not-found", index, hint: indentationHint(file.text, oldText) });
    const span = fuzzyIndex(fuzzy, fuzzy.text.indexOf(needle), needle.length);
    matches.push({ index, start: file.rawStart(span.start), end: file.rawStart(span.end), fuzzy: true });
  }

  const ordered = [...matches].sort((a, b) => a.start - b.start || a.index - b.index);
  for (let i = 1; i < ordered.length; i++) {
    const prev = ordered[i - 1]!;
    const cur = ordered[i]!;
    if (cur.start < prev.end) {
      return fail({
        kind: "overlap",
        first: Math.min(prev.index, cur.index),
        second: Math.max(prev.index, cur.index),
      });
    }
  }

  let text = "";
  let pos = 0;
  for (const m of ordered) {
    const newText = toLf(edits[m.index]!.newText).text;
    text += raw.slice(pos, m.start) + (eol === "\r\n" ? newText.replace(/\n/g, "\r\n") : newText);
    pos = m.end;
  }
  text += raw.slice(pos);
  if (text === raw) return fail({ kind: "no-change" });
  return {
    ok: true,
    text: bom ? BOM + text : text,
    oldLf: file.text,
    newLf: toLf(text).text,
    bom,
    eol,
    matches,
  };
}

function fail(failure: EditFailure): EditApplyResult {
  return { ok: false, failure };
}

/**
 * Looks for `oldText`'s lines in `fileLf` ignoring leading and trailing whitespace; when found with
 * different indentation, says which (tabs in the file versus spaces in oldText, or the reverse).
 * The first oldText line may be a line's tail and the last a line's head, as in a real match.
 * Linear time: the middle lines are found with KMP over trimmed lines, and the indentation checks
 * stop (no hint) after a budget of a few comparisons per line, so a huge oldText cannot make it quadratic.
 */
export function indentationHint(fileLf: string, oldTextLf: string): NotFoundHint | null {
  const want = oldTextLf.split("\n");
  const wantTrim = want.map((l) => l.trim());
  if (wantTrim.every((l) => l === "")) return null;
  const lines = fileLf.split("\n");
  const fileTrim = lines.map((l) => l.trim());
  const last = want.length - 1;
  let budget = 4 * (lines.length + want.length);
  for (const i of candidateStarts(fileTrim, wantTrim)) {
    if (!endsMatch(fileTrim, i, wantTrim)) continue;
    for (let k = 0; k <= last; k++) {
      if (--budget < 0) return null;
      const fileIndent = leading(lines[i + k]!);
      const wantIndent = leading(want[k]!);
      // The first line may be the tail of a file line: only its own indentation can be compared.
      if (fileIndent === wantIndent || wantTrim[k] === "" || (k === 0 && wantIndent === "")) continue;
      if (fileIndent.includes("\t") && !wantIndent.includes("\t") && wantIndent.includes(" ")) {
        return { kind: "file-uses-tabs", line: i + k + 1 };
      }
      if (wantIndent.includes("\t") && !fileIndent.includes("\t") && fileIndent.includes(" ")) {
        return { kind: "file-uses-spaces", line: i + k + 1 };
      }
      return { kind: "indentation", line: i + k + 1 };
    }
  }
  return null;
}

/** File line indexes where `wantTrim`'s middle lines (all but the first and last) match exactly. */
function* candidateStarts(fileTrim: readonly string[], wantTrim: readonly string[]): Generator<number> {
  const last = wantTrim.length - 1;
  if (last <= 1) {
    for (let i = 0; i + wantTrim.length <= fileTrim.length; i++) yield i;
    return;
  }
  for (const at of sequenceMatches(fileTrim, wantTrim.slice(1, last))) {
    if (at >= 1 && at - 1 + wantTrim.length <= fileTrim.length) yield at - 1;
  }
}

/** Start indexes of every occurrence of `needle` (non-empty) in `hay`, compared with ===; KMP, O(n + m). */
function* sequenceMatches(hay: readonly string[], needle: readonly string[]): Generator<number> {
  const fail = new Int32Array(needle.length);
  for (let i = 1, k = 0; i < needle.length; i++) {
    while (k > 0 && needle[i] !== needle[k]) k = fail[k - 1]!;
    if (needle[i] === needle[k]) k++;
    fail[i] = k;
  }
  for (let i = 0, k = 0; i < hay.length; i++) {
    while (k > 0 && hay[i] !== needle[k]) k = fail[k - 1]!;
    if (hay[i] === needle[k]) k++;
    if (k === needle.length) {
      yield i - k + 1;
      k = fail[k - 1]!;
    }
  }
}

/** The first and last wanted lines against the file lines at `at` (the middle ones already matched). */
function endsMatch(fileTrim: readonly string[], at: number, wantTrim: readonly string[]): boolean {
  const last = wantTrim.length - 1;
  if (last === 0) return wantTrim[0] !== "" && fileTrim[at]!.includes(wantTrim[0]!);
  return fileTrim[at]!.endsWith(wantTrim[0]!) && fileTrim[at + last]!.startsWith(wantTrim[last]!);
}

function leading(line: string): string {
  return /^[ \t]*/.exec(line)![0];
}
