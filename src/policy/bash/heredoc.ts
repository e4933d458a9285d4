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
import { withBashTree } from "./parser.js";

/** How bash reads one here-document. */
type HeredocReading =
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
function heredocDelimiter(word: string): { delimiter: string; quoted: boolean } | null {
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
function readHeredoc(redirect: Node, root: Node, script: string): HeredocReading {
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

/** Arithmetic of digits and operators only: `$[1+2]` runs nothing. */
const PLAIN_OLD_ARITHMETIC = /^\$\[[\d\s+\-*/%()<>=!&|^~?:,]*\]/;

/** Index after the backtick substitution whose body starts at `j`, or -1. */
function skipBacktick(text: string, j: number): number {
  for (let k = j; k < text.length; k++) {
    if (text[k] === "\\") k++;
    else if (text[k] === "`") return k + 1;
  }
  return -1;
}

/** Index after the double-quoted string whose body starts at `j`, or -1. */
function skipDouble(text: string, j: number): number {
  for (let k = j; k < text.length && k >= 0; k++) {
    const ch = text[k];
    if (ch === "\\") k++;
    else if (ch === '"') return k + 1;
    else if (ch === "`") k = skipBacktick(text, k + 1) - 1;
    else if (ch === "$" && (text[k + 1] === "(" || text[k + 1] === "{")) k = skipDollar(text, k) - 1;
  }
  return -1;
}

/**
 * Index after the `$(…)`, `$((…))` or `${…}` at `i` of `text`, or -1 when its end cannot be told
 * by this lexer (a here-doc or `case` inside `$(…)`, a single quote inside `${…}`). A bound only:
 * the parser must read the same extent (expansionNodes), else the body is opaque.
 */
function skipDollar(text: string, i: number): number {
  const braces = text[i + 1] === "{";
  // `<<` in `$((…))` is a shift; were it a subshell's here-doc, the parser's extent would differ.
  const arithmetic = text[i + 2] === "(";
  let depth = 1;
  for (let k = i + 2; k < text.length && k >= 0; k++) {
    const ch = text[k] as string;
    if (ch === "\\") k++;
    else if (ch === '"') k = skipDouble(text, k + 1) - 1;
    else if (ch === "`") k = skipBacktick(text, k + 1) - 1;
    else if (ch === "$" && (text[k + 1] === "(" || text[k + 1] === "{")) k = skipDollar(text, k) - 1;
    else if (braces) {
      if (ch === "'") return -1;
      if (ch === "{") depth++;
      else if (ch === "}" && --depth === 0) return k + 1;
    } else if (ch === "'") {
      k = text.indexOf("'", k + 1);
      if (k < 0) return -1;
    } else if (ch === "#" && /[\s;&|()]/.test(text[k - 1] ?? " ")) {
      k = text.indexOf("\n", k);
      if (k < 0) return -1;
    } else if (text.startsWith("<<<", k)) k += 2;
    else if (text.startsWith("<<", k) && !arithmetic) return -1;
    else if (/^case\s/.test(text.slice(k, k + 5))) return -1;
    else if (ch === "(") depth++;
    else if (ch === ")" && --depth === 0) return k + 1;
  }
  return -1;
}

/**
 * What bash expands in an unquoted-delimiter here-doc body (see module doc), as words to parse:
 * each `$(…)`, `$((…))` and `${…}` as written, each backtick substitution as `$(script\n)` (its
 * `\$`, `` \` ``, `\\` resolved); or why it cannot be told. `$name`, `$1` and the like only insert
 * a value, which bash does not expand again.
 */
function bodyExpansions(body: string): { words: string[] } | { opaque: string } {
  const words: string[] = [];
  for (let i = 0; i < body.length; i++) {
    const ch = body[i];
    if (ch === "\\") i++;
    else if (ch === "`") {
      const end = skipBacktick(body, i + 1);
      if (end < 0) return { opaque: "a backtick substitution in a here-document does not end" };
      words.push(`$(${body.slice(i + 1, end - 1).replace(/\\([`$\\])/g, "$1")}\n)`);
      i = end - 1;
    } else if (ch === "$" && (body[i + 1] === "(" || body[i + 1] === "{")) {
      const end = skipDollar(body, i);
      if (end < 0)
        return {
          opaque:
            "an expansion in a here-document is not read whole (a here-doc, case or single quote in it)",
        };
      words.push(body.slice(i, end));
      i = end - 1;
    } else if (ch === "$" && body[i + 1] === "[") {
      const plain = PLAIN_OLD_ARITHMETIC.exec(body.slice(i));
      if (!plain) return { opaque: "$[…] arithmetic in a here-document is not analysed" };
      i += plain[0].length - 1;
    }
  }
  return { words };
}

/** One script holding `words` (bodyExpansions), each as the argument of `:` on its own line. */
function expansionScript(words: readonly string[]): string {
  return words.map((w) => `: ${w}`).join("\n");
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

/**
 * The expansion node of each of `words` in the tree (root `root`) of expansionScript(words), or
 * why they cannot be walked: the parser must read each word whole as one expansion, and inside a
 * `${…}` or `$((…))` every `$(`, `${`, `$[` and backtick must be a node of its own (quotes there
 * do not quote in a here-doc: bash runs `${x:-'$(cmd)'}` as in double quotes).
 */
function expansionNodes(root: Node, words: readonly string[]): Node[] | string {
  if (root.hasError) return "an expansion in a here-document does not parse";
  const nodes: Node[] = [];
  let offset = 2;
  for (const word of words) {
    let node = root.descendantForIndex(offset, offset + 1);
    while (node && !(node.startIndex === offset && EXPANSIONS.includes(node.type))) node = node.parent;
    if (node?.text !== word) return "an expansion in a here-document does not parse";
    // Only its own `${` or `$((`: nothing inside to check.
    if (node.type !== "command_substitution" && expansionStarts(word).length > 1) {
      const parsed = new Set(
        node.descendantsOfType([...EXPANSIONS, "process_substitution"]).map((n) => n?.startIndex),
      );
      if (!expansionStarts(word).every((k) => parsed.has(offset + k)))
        return `quotes inside \${…} or $((…)) do not quote in a here-document: a substitution there is not analysed`;
    }
    nodes.push(node);
    offset += word.length + 3;
  }
  return nodes;
}

/**
 * Reads the here-doc `redirect`'s body in `script` (whose tree's root is `root`: readHeredoc) and
 * calls `walk` with the script of its expansions (expansionScript), that script's tree's root and
 * the expansions' nodes in it, valid only during the call. Returns why the here-doc cannot be
 * judged (it is opaque), or null (walked, or nothing in it expands).
 */
export function withHeredocExpansions(
  redirect: Node,
  root: Node,
  script: string,
  walk: (script: string, root: Node, nodes: Node[]) => void,
): string | null {
  const reading = readHeredoc(redirect, root, script);
  if (reading.kind === "opaque") return reading.why;
  if (reading.kind !== "expands") return null;
  const scan = bodyExpansions(reading.body);
  if ("opaque" in scan) return scan.opaque;
  if (scan.words.length === 0) return null;
  const expansions = expansionScript(scan.words);
  return withBashTree(expansions, (tree) => {
    const nodes = expansionNodes(tree, scan.words);
    if (typeof nodes === "string") return nodes;
    walk(expansions, tree, nodes);
    return null;
  });
}
