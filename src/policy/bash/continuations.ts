/**
 * Line continuations read the way bash reads them. bash removes a backslash-newline from its input
 * before it splits words (bash 5.2 parse.y shell_getc, `remove_quoted_newline`), so `cat .e\` +
 * newline + `nv` runs `cat .env`; tree-sitter-bash takes the pair for whitespace and parses two
 * words, `.e` and `nv`. joinContinuations() removes every pair that bash removes, so the script the
 * analysis parses is the one bash tokenises. bash keeps the pair in single quotes, `$'…'`, a comment
 * and the body of a here-document (a quoted delimiter's body is data; an unquoted one's
 * continuations are joined by bash/heredoc.ts as bash joins them), and after an even run of
 * backslashes (`\\` is a quoted backslash, the newline ends the line).
 */
import type { Node, TreeCursor } from "web-tree-sitter";
import { withBashTree } from "./parser.js";

/** Syntax whose text bash reads without removing backslash-newlines. */
const KEEPS_CONTINUATIONS = new Set(["raw_string", "ansi_c_string", "comment", "heredoc_body"]);

/** How many times a script is parsed again: each pass joins at least one continuation. */
const MAX_CONTINUATION_PASSES = 8;

/** The [start, end) ranges (UTF-16 code units) of the nodes in which bash keeps a continuation. */
function keptRanges(root: Node): [number, number][] {
  const ranges: [number, number][] = [];
  const cursor: TreeCursor = root.walk();
  try {
    let descend = true;
    for (;;) {
      if (descend && KEEPS_CONTINUATIONS.has(cursor.nodeType)) {
        ranges.push([cursor.startIndex, cursor.endIndex]);
        descend = false;
      }
      if (descend && cursor.gotoFirstChild()) continue;
      descend = true;
      while (!cursor.gotoNextSibling()) {
        if (!cursor.gotoParent()) return ranges;
      }
    }
  } finally {
    cursor.delete();
  }
}

/** `script` with the continuations outside `kept` removed (those at an odd run of backslashes). */
function removeContinuations(script: string, kept: [number, number][]): string {
  let out = "";
  let from = 0;
  for (let at = script.indexOf("\\\n"); at >= 0; at = script.indexOf("\\\n", at + 1)) {
    let run = 1;
    while (at - run >= from && script[at - run] === "\\") run++;
    if (run % 2 === 0) continue;
    if (kept.some(([start, end]) => at >= start && at < end)) continue;
    out += script.slice(from, at);
    from = at + 2;
  }
  return from === 0 ? script : out + script.slice(from);
}

/**
 * The script bash tokenises: `script` with every backslash-newline bash removes removed (see the
 * module doc). Parsed again until nothing changes, since a join can turn what the parser took for
 * a comment into a word (`a\` newline `#b` is the word `a#b`). `text` is null, with `why`, when the
 * text still changed after MAX_CONTINUATION_PASSES parses: the script is then opaque.
 * Requires loadBashParser() to have resolved.
 */
export function joinContinuations(
  script: string,
): { text: string; why?: never } | { text: null; why: string } {
  let text = script;
  for (let pass = 0; pass < MAX_CONTINUATION_PASSES; pass++) {
    if (!text.includes("\\\n")) return { text };
    const current = text;
    const joined = withBashTree(current, (root) => removeContinuations(current, keptRanges(root)));
    if (joined === current) return { text };
    text = joined;
  }
  return { text: null, why: `line continuations still join words after ${MAX_CONTINUATION_PASSES} parses` };
}
