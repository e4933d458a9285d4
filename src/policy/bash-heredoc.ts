/**
 * Here-documents read the way bash reads them (issue 37, item 1). tree-sitter-bash's here-doc
 * scanner returns no substitution for a backtick in a body and parses nothing in a `<<-` body, takes
 * `E;` for the delimiter of `<<E; cmd`, and fails on two here-docs on one line; so its body is never
 * trusted. readHeredoc() checks the delimiter word, where the body starts and the line that ends it
 * against bash's own rules (bash 5.2 parse.y read_a_line and make_cmd.c make_here_document: a
 * backslash-newline joins lines when the delimiter is unquoted, `<<-` strips leading tabs from the
 * joined line, the line equal to the delimiter ends the body), and returns the body as bash
 * expands it. scanBody() finds what bash expands in that body (backticks, `$(…)`, `$((…))`,
 * `${…}`, `$[…]`: bash expands an unquoted-delimiter body like double-quoted text, with `\` quoting
 * only `$`, `` ` `` and `\`). Where bash and the parser could disagree, the here-doc is opaque.
 */
import type { Node } from "web-tree-sitter";
import { withBashTree } from "./bash-parser.js";

/** How bash reads one here-document. */
export type HeredocReading =
  /** The delimiter is quoted (`<<'E'`, `<<"E"`, `<<\E`): bash expands nothing in the body. */
  | { kind: "data" }
  /** The body as bash expands it: continuation lines joined, `<<-` tabs stripped. */
  | { kind: "expands"; body: string }
  /** What bash would read cannot be told from the parse: never allowed. */
  | { kind: "opaque"; why: string };

/** Characters that end an unquoted shell word (bash's metacharacters) and blanks. */
const METACHARACTERS = new Set([" ", "\t", "\n", "|", "&", ";", "(", ")", "<", ">"]);

/**
 * The delimiter a here-doc's word stands for (bash: quote removal, no expansion) and whether any
 * part is quoted; null for a word that is not plain text, quotes and backslashes (a `$`, a
 * backtick, `$'…'`, an unquoted metacharacter: bash versions read these differently).
 */
export function heredocDelimiter(word: string): { delimiter: string; quoted: boolean } | null {
  let delimiter = "";
  let quoted = false;
  for (let i = 0; i < word.length; i++) {
    const ch = word[i] as string;
    if (ch === "\\") {
      if (i + 1 >= word.length) return null;
      delimiter += word[++i];
      quoted = true;
    } else if (ch === "'" || ch === '"') {
      const close = word.indexOf(ch, i + 1);
      if (close < 0) return null;
      const inner = word.slice(i + 1, close);
      if (ch === '"' && /[$`\\]/.test(inner)) return null;
      delimiter += inner;
      quoted = true;
      i = close;
    } else if (ch === "$" || ch === "`" || METACHARACTERS.has(ch)) return null;
    else delimiter += ch;
  }
  return { delimiter, quoted };
}

/** True when the newline at `at` follows an odd run of backslashes (a line continuation). */
function continued(text: string, at: number): boolean {
  let run = 0;
  for (let k = at - 1; k >= 0 && text[k] === "\\"; k--) run++;
  return run % 2 === 1;
}

/** True when `node` is `of` or one of its ancestors. */
function encloses(node: Node, of: Node): boolean {
  for (let n: Node | null = of; n; n = n.parent) if (n.id === node.id) return true;
  return false;
}

/**
 * Whether the newline at `at`, between a here-doc operator and its body, is inside another syntax
 * node (a quoted string or substitution spanning lines, the body of an earlier here-doc on the
 * line) or continues the line; a bare newline there would start the body earlier than the parse.
 */
function newlineInside(root: Node, redirect: Node, script: string, at: number): boolean {
  const holder = root.namedDescendantForIndex(at, at + 1);
  if (!holder || encloses(holder, redirect)) {
    const before = root.namedDescendantForIndex(at - 1, at);
    return continued(script, at) && before?.type !== "comment";
  }
  // An earlier here-doc's body: its operator must come first on the line.
  for (let n: Node | null = holder; n; n = n.parent)
    if (n.type === "heredoc_redirect") return n.startIndex < redirect.startIndex;
  return true;
}

/**
 * How bash reads the here-doc `redirect` (a heredoc_redirect node of the tree of `script`, whose
 * root is `root`); see HeredocReading. Indices are the parser's, UTF-16 code units of `script`.
 */
export function readHeredoc(redirect: Node, root: Node, script: string): HeredocReading {
  const operator = redirect.children.find((c) => c && !c.isNamed)?.type ?? "";
  const start = redirect.children.find((c) => c?.type === "heredoc_start");
  const body = redirect.children.find((c) => c?.type === "heredoc_body");
  const end = redirect.children.find((c) => c?.type === "heredoc_end");
  if ((operator !== "<<" && operator !== "<<-") || !start)
    return { kind: "opaque", why: "a here-document the parser does not read whole" };
  const word = heredocDelimiter(start.text);
  const next = script[start.endIndex];
  if (!word || (next !== undefined && !METACHARACTERS.has(next)))
    return { kind: "opaque", why: `the here-document delimiter ${start.text} is not a plain word` };
  if (!end || end.isMissing || end.text === "")
    return { kind: "opaque", why: `the parser finds no line ending the here-document ${start.text}` };
  const strip = operator === "<<-";
  // The body starts on the line after the operator's (or after an earlier here-doc on that line).
  let lineStart = body ? body.startIndex : end.startIndex;
  while (strip && script[lineStart - 1] === "\t") lineStart--;
  let startsAfter = script[lineStart - 1] === "\n" && !newlineInside(root, redirect, script, lineStart - 1);
  for (let at = script.indexOf("\n", start.endIndex); startsAfter && at >= 0 && at < lineStart - 1; ) {
    startsAfter = newlineInside(root, redirect, script, at);
    at = script.indexOf("\n", at + 1);
  }
  if (!startsAfter)
    return { kind: "opaque", why: `bash may start the here-document ${start.text} on another line` };
  // Read logical lines as bash does until the one equal to the delimiter.
  let text = "";
  for (let at = lineStart; at < script.length; ) {
    let line = "";
    let lineEnd = at;
    for (;;) {
      const newline = script.indexOf("\n", lineEnd);
      const stop = newline < 0 ? script.length : newline;
      line += script.slice(lineEnd, stop);
      lineEnd = stop;
      if (newline >= 0 && !word.quoted && continued(script, newline)) {
        line = line.slice(0, -1);
        lineEnd = newline + 1;
        continue;
      }
      break;
    }
    const logical = strip ? line.replace(/^\t+/, "") : line;
    if (logical === word.delimiter) {
      if (end.endIndex !== lineEnd || end.startIndex < at)
        return { kind: "opaque", why: `bash ends the here-document ${start.text} on another line` };
      return word.quoted ? { kind: "data" } : { kind: "expands", body: text };
    }
    text += `${logical}\n`;
    at = lineEnd + 1;
  }
  return { kind: "opaque", why: `bash reads the here-document ${start.text} to the end of the script` };
}

/** What scanBody finds: a backtick substitution's script, or a `$` expansion to parse at `at`. */
export interface BodyVisitor {
  /** The script a backtick substitution runs (its `\$`, `` \` ``, `\\` resolved). */
  backtick(script: string): void;
  /**
   * An expansion starting at `at` of `body` (`$(`, `$((`, `${`): returns its length in UTF-16
   * code units, or null when it cannot be read (scanning stops; the caller made it opaque).
   */
  dollar(body: string, at: number): number | null;
  opaque(why: string): void;
}

/** Arithmetic of digits and operators only: `$[1+2]` runs nothing. */
const PLAIN_OLD_ARITHMETIC = /^\$\[[\d\s+\-*/%()<>=!&|^~?:,]*\]/;

/**
 * Visits what bash expands in an unquoted-delimiter here-doc body (see module doc). `$name`,
 * `$1` and the like only insert a value, which bash does not expand again.
 */
export function scanBody(body: string, visit: BodyVisitor): void {
  for (let i = 0; i < body.length; i++) {
    const ch = body[i];
    if (ch === "\\") i++;
    else if (ch === "`") {
      let close = i + 1;
      while (close < body.length && body[close] !== "`") close += body[close] === "\\" ? 2 : 1;
      if (close >= body.length) {
        visit.opaque("a backtick substitution in a here-document does not end");
        return;
      }
      visit.backtick(body.slice(i + 1, close).replace(/\\([`$\\])/g, "$1"));
      i = close;
    } else if (ch === "$") {
      const next = body[i + 1];
      if (next === "(" || next === "{") {
        const length = visit.dollar(body, i);
        if (length === null) return;
        i += length - 1;
      } else if (next === "[") {
        const plain = PLAIN_OLD_ARITHMETIC.exec(body.slice(i));
        if (!plain) {
          visit.opaque("$[…] arithmetic in a here-document is not analysed");
          return;
        }
        i += plain[0].length - 1;
      }
    }
  }
}

/** Start offsets of every unescaped `$(`, `${`, `$[` and backtick in `text`, quotes ignored. */
function expansionStarts(text: string): number[] {
  const starts: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === "\\") i++;
    else if (ch === "`" || (ch === "$" && /[({[]/.test(text[i + 1] ?? ""))) starts.push(i);
  }
  return starts;
}

const EXPANSIONS = ["command_substitution", "arithmetic_expansion", "expansion"];

/** The expansion node at offset 2 of the tree of `: ${text}` (see expansionText), or null. */
export function expansionNode(root: Node): Node | null {
  let node = root.descendantForIndex(2, 3);
  while (node && !(node.startIndex === 2 && EXPANSIONS.includes(node.type))) node = node.parent;
  return node;
}

/**
 * The text of the expansion starting at `at` of `body` (`$(…)`, `$((…))`, `${…}`) as the parser
 * reads it on its own (after `: `), or null when it does not parse. Its extent is found in a
 * window that grows 4× until the expansion ends inside it, so a body of many expansions costs
 * about its length, never its length squared. Requires loadBashParser() to have resolved.
 */
export function expansionText(body: string, at: number): string | null {
  for (let window = 64; ; window *= 4) {
    const text = body.slice(at, at + window);
    const all = at + window >= body.length;
    const found = withBashTree(`: ${text}`, (root) => {
      const node = expansionNode(root);
      return node && !node.hasError && (all || node.endIndex < text.length) ? node.text : null;
    });
    if (found !== null || all) return found;
  }
}

/**
 * Why the `${…}` or `$((…))` `node` (of the tree of `: ` + its text) hides a substitution, or
 * null: inside them in a here-doc quotes do not quote (bash runs `${x:-'$(cmd)'}` there as in
 * double quotes), so every `$(`, `${`, `$[` and backtick must be a node the analysis walks.
 */
export function hiddenSubstitution(node: Node): string | null {
  if (node.type === "command_substitution") return null;
  const parsed = new Set(
    node.descendantsOfType([...EXPANSIONS, "process_substitution"]).map((n) => n?.startIndex),
  );
  return expansionStarts(node.text).every((k) => parsed.has(k + 2))
    ? null
    : `quotes inside \${…} or $((…)) do not quote in a here-document: a substitution there is not analysed`;
}
