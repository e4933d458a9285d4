/**
 * Text normalisations used by edit matching, each keeping a map back to the original offsets so a
 * match found in normalised text replaces exactly the original characters it covers.
 * The fuzzy rules are Pi's (edit-diff.ts normalizeForFuzzyMatch) plus NFKC, as issue 3 asks.
 */

/** LF-normalised text plus the map from its offsets to the original's. */
export interface LfText {
  /** The text with every CRLF and lone CR turned into LF. */
  text: string;
  /** Offset in the original text of offset `i` of `text` (`text.length` maps to the original length). */
  rawStart(i: number): number;
}

/** Turns CRLF and lone CR into LF, keeping the offset map. */
export function toLf(raw: string): LfText {
  if (!raw.includes("\r")) return { text: raw, rawStart: (i) => i };
  const starts = new Int32Array(raw.length + 1);
  let text = "";
  let chunkStart = 0;
  let n = 0;
  for (let i = 0; i < raw.length; i++) {
    starts[n++] = i;
    if (raw.charCodeAt(i) !== 13) continue;
    text += `${raw.slice(chunkStart, i)}\n`;
    if (raw.charCodeAt(i + 1) === 10) i++;
    chunkStart = i + 1;
  }
  text += raw.slice(chunkStart);
  starts[n] = raw.length;
  return { text, rawStart: (i) => starts[i]! };
}

/** Fuzzy-normalised text: each UTF-16 unit of `text` came from `start[i]..end[i]` of the input. */
export interface FuzzyText {
  text: string;
  start: number[];
  end: number[];
}

const SINGLE_QUOTES = /[\u2018\u2019\u201A\u201B]/g;
const DOUBLE_QUOTES = /[\u201C\u201D\u201E\u201F]/g;
// U+2010 hyphen .. U+2015 horizontal bar, U+2212 minus.
const DASHES = /[\u2010-\u2015\u2212]/g;
// NBSP, U+2002..U+200A, narrow NBSP, medium math space, ideographic space.
const SPACES = /[\u00A0\u2002-\u200A\u202F\u205F\u3000]/g;
// A base code point and the combining marks after it: NFKC composes within such a cluster.
const CLUSTER = /[\s\S]\p{M}*/gu;

function normalizeCluster(cluster: string): string {
  return cluster
    .normalize("NFKC")
    .replace(SINGLE_QUOTES, "'")
    .replace(DOUBLE_QUOTES, '"')
    .replace(DASHES, "-")
    .replace(SPACES, " ");
}

/**
 * Pi's fuzzy normalisation of LF text: NFKC, curly quotes to ASCII, unicode dashes to "-", special
 * spaces to " ", trailing whitespace removed from every line. Works cluster by cluster so every
 * output unit maps back to the input span it came from.
 */
export function normalizeForFuzzyMatch(textLf: string): FuzzyText {
  const out: string[] = [];
  const start: number[] = [];
  const end: number[] = [];
  const trimLine = (): void => {
    while (out.length > 0 && out[out.length - 1] !== "\n" && /\s/.test(out[out.length - 1]!)) {
      out.pop();
      start.pop();
      end.pop();
    }
  };
  for (const m of textLf.matchAll(CLUSTER)) {
    const s = m.index;
    const e = s + m[0].length;
    if (m[0] === "\n") trimLine();
    // A lone ASCII unit is its own normal form (NFKC and the replacements only change non-ASCII).
    const norm = m[0].length === 1 && m[0].charCodeAt(0) < 0x80 ? m[0] : normalizeCluster(m[0]);
    for (let k = 0; k < norm.length; k++) {
      out.push(norm[k]!);
      start.push(s);
      end.push(e);
    }
  }
  trimLine();
  return { text: out.join(""), start, end };
}

/** The input span covered by `length` units of `fuzzy.text` from `at` (length >= 1). */
export function fuzzyIndex(fuzzy: FuzzyText, at: number, length: number): { start: number; end: number } {
  return { start: fuzzy.start[at]!, end: fuzzy.end[at + length - 1]! };
}
