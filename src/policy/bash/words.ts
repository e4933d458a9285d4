/**
 * Reduces a tree-sitter-bash word node to the literal argv word the shell would pass, resolving
 * quoting the way bash does: `r''m` -> `rm`, `\rm` -> `rm`, `$'\x72m'` -> `rm`, `"a\"b"` -> `a"b`.
 * Anything holding an expansion (`$X`, `${X}`, `$(...)`, backticks, `$((...))`, `<(...)`) is not
 * literal (value null). Unquoted glob characters and braces mark the word as one the shell may expand.
 */
import type { Node } from "web-tree-sitter";
import { ANY_TEXT, type ArgWord } from "../command-pattern.js";

const NOT_LITERAL: ArgWord = { value: null, expands: false };

/** Resolves backslashes outside quotes: `\x` is `x`, a backslash-newline disappears. */
function unescapeBare(text: string): string {
  return text.replace(/\\(\n|.)/gs, (_m, ch: string) => (ch === "\n" ? "" : ch));
}

/** Resolves backslashes inside double quotes: only `\$ \` \" \\` and backslash-newline are special. */
function unescapeDouble(text: string): string {
  return text.replace(/\\([$`"\\\n])/g, (_m, ch: string) => (ch === "\n" ? "" : ch));
}

const C_ESCAPES: Record<string, string> = {
  a: "\x07",
  b: "\b",
  e: "\x1b",
  E: "\x1b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "?": "?",
};

/** Decodes the body of a `$'...'` string (bash ANSI-C quoting). */
function decodeAnsiC(body: string): string {
  return body.replace(
    /\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)/gs,
    (m, esc: string) => {
      const head = esc[0] as string;
      if (head === "x" || head === "u" || head === "U")
        return String.fromCodePoint(Number.parseInt(esc.slice(1), 16));
      if (/[0-7]/.test(head)) return String.fromCharCode(Number.parseInt(esc, 8) & 0xff);
      if (head === "c") return String.fromCharCode((esc.charCodeAt(1) ?? 0) & 0x1f);
      return C_ESCAPES[head] ?? m;
    },
  );
}

/** True when an unquoted word contains characters the shell expands (globs, braces, a leading tilde). */
function mayExpand(text: string): boolean {
  const bare = text.replace(/\\./gs, "");
  return /[*?[{}]/.test(bare) || bare.startsWith("~");
}

/** The literal value of a word-like node (see module doc). */
export function wordOf(node: Node): ArgWord {
  switch (node.type) {
    case "word":
      return { value: unescapeBare(node.text), expands: mayExpand(node.text) };
    case "number":
    case "variable_name":
    case "test_operator":
      return { value: node.text, expands: false };
    case "raw_string":
      return { value: node.text.slice(1, -1), expands: false };
    case "ansi_c_string":
      return { value: decodeAnsiC(node.text.slice(2, -1)), expands: false };
    case "string":
    case "translated_string": {
      let value = "";
      for (const child of node.namedChildren) {
        if (!child) continue;
        if (child.type !== "string_content") return NOT_LITERAL;
        value += unescapeDouble(child.text);
      }
      return { value, expands: false };
    }
    case "concatenation": {
      let value = "";
      let expands = false;
      for (const child of node.children) {
        if (!child) continue;
        if (!child.isNamed) {
          // An anonymous `$` before a string ($"..."): the translation prefix, no text of its own.
          if (child.type === "$") continue;
          return NOT_LITERAL;
        }
        const part = wordOf(child);
        if (part.value === null) return NOT_LITERAL;
        value += part.value;
        expands ||= part.expands;
      }
      return { value, expands };
    }
    default:
      return NOT_LITERAL;
  }
}

/**
 * The text of a double-quoted `"$(echo WORD…)"`: bash's builtin echo prints its words joined by
 * spaces, and the substitution strips the trailing newline. Only when every word is literal, none
 * starts with `-` (an option) or holds a backslash (xpg_echo escapes), nothing is redirected, and
 * the script defines no `echo` function and runs no `alias`, `shopt` or `enable` (which could make
 * `echo` another command); else null. The echo command itself is judged as any other.
 */
export function echoedText(node: Node): string | null {
  if (node.type !== "string" || node.namedChildCount !== 1) return null;
  const sub = node.namedChildren[0];
  if (sub?.type !== "command_substitution" || sub.text.startsWith("`") || sub.namedChildCount !== 1)
    return null;
  const command = sub.namedChildren[0];
  if (command?.type !== "command") return null;
  const [name, ...args] = command.namedChildren;
  if (name?.type !== "command_name" || name.text !== "echo") return null;
  const words = args.map((a) => (a ? wordOf(a) : NOT_LITERAL));
  if (words.some((w) => w.value === null || w.expands || /^-|\\/.test(w.value))) return null;
  let root: Node = node;
  while (root.parent) root = root.parent;
  for (const f of root.descendantsOfType("function_definition"))
    if (f?.childForFieldName("name")?.text === "echo") return null;
  for (const c of root.descendantsOfType("command_name"))
    if (["alias", "shopt", "enable"].includes(c?.text ?? "")) return null;
  return words
    .map((w) => w.value)
    .join(" ")
    .replace(/\n+$/, "");
}

/** The path a process substitution `<(…)` / `>(…)` stands for: a pipe bash made, never a file of the tree. */
const PROCESS_SUBSTITUTION_PATH = "/dev/fd/63";

/** Escapes glob syntax in quoted text. */
export function globEscape(text: string): string {
  return text.replace(/[\\*?[\]{}~,\u0001]/g, "\\$&");
}

/**
 * Every string the word `node` may expand to, as a glob (see ArgWord.glob). Unquoted text keeps
 * its wildcards, braces and tilde; quoted text is escaped; any expansion or substitution is
 * ANY_TEXT.
 */
export function globOf(node: Node, vars?: ReadonlyMap<string, string>): string {
  switch (node.type) {
    case "simple_expansion":
    case "expansion": {
      // `"$f"` / `"${f}"` of a loop variable (bash/loops.ts): the glob of its values. Unquoted,
      // bash splits the value at blanks and globs it again (`src/id_rs[a]` may become
      // `src/id_rsa`): any text.
      const only = node.namedChildCount === 1 ? node.namedChildren[0] : null;
      const name =
        only?.type === "variable_name" && node.text.replace(/[${}]/g, "") === only.text ? only.text : null;
      const quoted = node.parent?.type === "string";
      return (quoted && name !== null && vars?.get(name)) || ANY_TEXT;
    }
    case "word":
      return node.text.replace(/\\\n/g, "");
    case "number":
    case "variable_name":
      return globEscape(node.text);
    case "raw_string":
    case "ansi_c_string":
      return globEscape(wordOf(node).value ?? "");
    case "string":
    case "translated_string": {
      let out = "";
      for (const child of node.namedChildren) {
        if (!child) continue;
        out += child.type === "string_content" ? globEscape(unescapeDouble(child.text)) : globOf(child, vars);
      }
      return out;
    }
    case "process_substitution":
      // bash passes the pipe it made as /dev/fd/N (Linux; 63 for the first one).
      return PROCESS_SUBSTITUTION_PATH;
    case "concatenation": {
      let out = "";
      for (const child of node.children) {
        if (!child || child.type === "$") continue;
        out += child.isNamed ? globOf(child, vars) : globEscape(child.text);
      }
      return out;
    }
    default:
      return ANY_TEXT;
  }
}
