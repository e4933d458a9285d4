/**
 * What an awk program does besides reading its input and printing, read with awk's own lexical
 * rules (POSIX awk, gawk 5, mawk; the awk model is in commands/text.ts). A security test
 * found `system\<newline>(…)` and `system/**\/(…)` read as effect-free: a pattern over the text
 * misses what awk skips (line continuations, comments) and what it joins. So the program is split
 * into tokens as awk does, and the exec constructs are judged by their tokens alone: the name
 * `system` anywhere, `|` / `|&`, `@`. Where awks disagree or the lexer cannot tell a regex from a
 * division, the program is opaque ("unknown"), never read one way by guess.
 */
import type { Effect } from "./grammar.js";

/** What a program does: its effect, and the files its output redirections name. */
export interface AwkProgram {
  effect: Effect | `unknown: ${string}` | null;
  /** `print > F` / `>> F` targets: the literal file name, or null for one computed as it runs. */
  writes: (string | null)[];
}

type TokenKind = "id" | "number" | "string" | "regex" | "op" | "newline";
interface Token {
  kind: TokenKind;
  text: string;
  /** A string's value when it has no escape sequence (awks decode those differently), else null. */
  value?: string | null;
  /** A `)` that closes `if (…)`, `while (…)`, `for (…)`: a statement, so a regex, may follow. */
  control?: boolean;
}

/** Multi-character operators, longest first. */
const OPERATORS = [
  "**=",
  "||",
  "&&",
  "|&",
  ">>",
  "++",
  "--",
  "==",
  "!=",
  "<=",
  ">=",
  "+=",
  "-=",
  "*=",
  "/=",
  "%=",
  "^=",
  "**",
];
/** Keywords after which awk expects an operand, so `/` starts a regex. */
const BEFORE_OPERAND = new Set(["print", "printf", "return", "case", "do", "else", "exit", "in"]);
/** Names after which awks disagree whether `/` divides or starts a regex. */
const AMBIGUOUS_BEFORE_SLASH = new Set(["getline", "length"]);
/** Tokens that end a statement. */
const TERMINATORS = new Set([";", "{", "}"]);
/** Operators after which a newline still ends the statement: those that end an operand. */
const OPERAND_END = new Set([")", "]", "++", "--"]);

/**
 * Whether `tokens[k]` ends the statement it is in. awks let it go on after a newline that follows
 * `,`, `&&`, `||` (gawk: `?`, `:`), blank and comment lines included; any newline after an
 * operator is taken as such, which can only see more of a print statement than awk does.
 */
function endsStatement(tokens: Token[], k: number): boolean {
  const t = tokens[k];
  if (t === undefined) return true;
  if (t.kind !== "newline") return t.kind === "op" && TERMINATORS.has(t.text);
  let j = k - 1;
  while (tokens[j]?.kind === "newline") j--;
  const before = tokens[j];
  return before === undefined || before.kind !== "op" || OPERAND_END.has(before.text);
}

/**
 * Whether a `/` after `prev` starts a regex (true), divides (false), or cannot be told (a reason).
 * It follows mawk's rule (divide after an operand: a name, number, string, regex, `)`, `]`)
 * except after the `)` of `if`/`while`/`for`, where gawk reads a regex (mawk then fails), and
 * after `++` / `--`, where mawk reads a regex and gawk a division.
 */
function slashStartsRegex(prev: Token | undefined): boolean | string {
  if (!prev || prev.kind === "newline") return true;
  if (prev.kind === "number" || prev.kind === "string" || prev.kind === "regex") return false;
  if (prev.kind === "id") {
    if (BEFORE_OPERAND.has(prev.text)) return true;
    if (AMBIGUOUS_BEFORE_SLASH.has(prev.text)) return `a / after ${prev.text} (a regex or a division)`;
    return false;
  }
  if (prev.text === ")") return prev.control === true;
  if (prev.text === "]") return false;
  // mawk reads a regex after `i++` (`i++ /2/ 1` is "411"), gawk a division.
  if (prev.text === "++" || prev.text === "--") return `a / after ${prev.text} (a regex or a division)`;
  return true;
}

/** The end of the regex starting at `start` (its closing `/`), or why it cannot be found. */
function regexEnd(program: string, start: number): number | string {
  // Bracket depth counts every `[` and keeps a `]` right after `[` or `[^` literal, so it is never
  // below the depth gawk or mawk track; a `/` inside brackets ends the regex in some awks only.
  let depth = 0;
  let opened = -1;
  for (let j = start + 1; j < program.length; j++) {
    const c = program[j];
    if (c === "\n") break;
    if (c === "\\") j++;
    else if (c === "[") {
      depth++;
      opened = j;
    } else if (c === "]" && depth > 0) {
      if (j !== opened + 1 && !(j === opened + 2 && program[opened + 1] === "^")) depth--;
    } else if (c === "/") {
      if (depth > 0) return "a / inside a bracket expression (awks differ on where the regex ends)";
      return j;
    }
  }
  return "an unterminated regex";
}

/** The end of the string starting at `start` (its closing quote), or why it cannot be found. */
function stringEnd(program: string, start: number): number | string {
  for (let j = start + 1; j < program.length; j++) {
    const c = program[j];
    if (c === "\\")
      j++; // an escape, or a line continuation inside the string
    else if (c === '"') return j;
    else if (c === "\n") break;
  }
  return "an unterminated string";
}

/**
 * awk's tokens of `program`, without whitespace, line continuations and comments; `failed` says
 * why the rest could not be read (the tokens before it are still awk's).
 */
function awkTokens(program: string): { tokens: Token[]; failed?: string } {
  const tokens: Token[] = [];
  const controlParens: boolean[] = [];
  const fail = (failed: string) => ({ tokens, failed });
  let i = 0;
  while (i < program.length) {
    const ch = program[i] as string;
    const rest = program.slice(i, i + 64);
    if (" \t\r\f\v".includes(ch)) {
      i++;
    } else if (ch === "\\") {
      // A line continuation (mawk allows blanks before the newline); awk refuses any other.
      const m = /^\\[ \t\r]*\n/.exec(program.slice(i));
      if (!m) return fail("a backslash outside a string that does not end the line");
      i += m[0].length;
    } else if (ch === "#") {
      const end = program.indexOf("\n", i);
      const comment = program.slice(i, end === -1 ? program.length : end);
      if (/\\[ \t\r]*$/.test(comment)) return fail("a comment that ends in a backslash");
      i = end === -1 ? program.length : end;
    } else if (ch === "\n") {
      tokens.push({ kind: "newline", text: "\n" });
      i++;
    } else if (ch === '"') {
      const end = stringEnd(program, i);
      if (typeof end === "string") return fail(end);
      const body = program.slice(i + 1, end);
      tokens.push({ kind: "string", text: `"${body}"`, value: body.includes("\\") ? null : body });
      i = end + 1;
    } else if (ch === "/") {
      const regex = slashStartsRegex(tokens.at(-1));
      if (typeof regex === "string") return fail(regex);
      if (regex) {
        const end = regexEnd(program, i);
        if (typeof end === "string") return fail(end);
        tokens.push({ kind: "regex", text: program.slice(i, end + 1) });
        i = end + 1;
      } else {
        const text = program[i + 1] === "=" ? "/=" : "/";
        tokens.push({ kind: "op", text });
        i += text.length;
      }
    } else if (/^[A-Za-z_]/.test(ch)) {
      const text = (/^[A-Za-z_][A-Za-z0-9_]*/.exec(rest) as RegExpExecArray)[0];
      tokens.push({ kind: "id", text });
      i += text.length;
    } else if (/^(?:\d|\.\d)/.test(rest)) {
      const text = (
        /^(?:0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)/.exec(rest) as RegExpExecArray
      )[0];
      tokens.push({ kind: "number", text });
      i += text.length;
    } else {
      const text = OPERATORS.find((op) => rest.startsWith(op)) ?? ch;
      const token: Token = { kind: "op", text };
      if (text === "(") controlParens.push(["if", "while", "for"].includes(tokens.at(-1)?.text ?? ""));
      if (text === ")") token.control = controlParens.pop() === true;
      tokens.push(token);
      i += text.length;
    }
  }
  return { tokens };
}

/**
 * The files `print` / `printf` statements redirect to: a `>` or `>>` at the statement's own
 * parenthesis level (awk reads one inside parentheses, or outside a print, as a comparison). A
 * target is literal only when it is a lone string without escapes ending the statement; any other
 * (`($1 "x")`, `ENVIRON["X"]`, `"a" "b"`) is null.
 */
function redirectTargets(tokens: Token[]): (string | null)[] {
  const targets: (string | null)[] = [];
  tokens.forEach((token, start) => {
    if (token.kind !== "id" || (token.text !== "print" && token.text !== "printf")) return;
    let depth = 0;
    for (let k = start + 1; k < tokens.length; k++) {
      const t = tokens[k] as Token;
      if (endsStatement(tokens, k) && (depth === 0 || t.kind !== "newline")) return;
      if (t.text === "(") depth++;
      else if (t.text === ")" && --depth < 0) return;
      else if (t.kind === "op" && (t.text === ">" || t.text === ">>") && depth === 0) {
        const target = tokens[k + 1];
        const literal = target?.kind === "string" && endsStatement(tokens, k + 2);
        targets.push(literal ? (target?.value ?? null) : null);
        return;
      }
    }
  });
  return targets;
}

/** Whether a `<` follows `getline` in its statement (`getline line < file` reads a named file). */
function getlineReadsFile(tokens: Token[]): boolean {
  return tokens.some((token, start) => {
    if (token.kind !== "id" || token.text !== "getline") return false;
    for (let k = start + 1; k < tokens.length; k++) {
      if (endsStatement(tokens, k)) return false;
      if (tokens[k]?.kind === "op" && tokens[k]?.text === "<") return true;
    }
    return false;
  });
}

/**
 * Reads an awk program: `exec` for the name `system` anywhere (whatever follows it), a pipe to or
 * from a command (`|`, gawk's `|&`) and `@` (`@load`, `@include`, indirect calls `@f()`); unknown
 * for `getline < file`, for ARGV / ARGC (files the command line does not name) and for a program
 * that cannot be read with confidence (see awkTokens); `network` for gawk's `/inet` special files;
 * `write` for output redirected to a file, whose names come back in `writes`. Pure.
 */
export function readAwkProgram(program: string): AwkProgram {
  const { tokens, failed } = awkTokens(program);
  const has = (kind: TokenKind, ...texts: string[]) =>
    tokens.some((t) => t.kind === kind && texts.includes(t.text));
  // Exec first, even before a part that cannot be read: the tokens before it are awk's own.
  if (has("id", "system") || has("op", "|", "|&", "@")) return { effect: "exec", writes: [] };
  if (failed) return { effect: `unknown: awk program: ${failed}`, writes: [] };
  if (getlineReadsFile(tokens))
    return { effect: "unknown: awk getline reads a file its program names", writes: [] };
  // Input files are ARGV[1..ARGC-1], read as the program runs: a program that touches them opens
  // files the command line does not name (`ARGV[1]=".e" "nv"`, `ARGV[ARGC++]=f`).
  if (has("id", "ARGV", "ARGC"))
    return { effect: "unknown: awk program changes ARGV / ARGC, the files it reads", writes: [] };
  const writes = redirectTargets(tokens);
  if (writes.some((w) => w !== null && /^\/inet[46]?\//.test(w))) return { effect: "network", writes };
  return { effect: writes.length > 0 ? "write" : null, writes };
}
