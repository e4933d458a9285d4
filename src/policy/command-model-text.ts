/**
 * The command model's text tools (command-model.ts): grep (GNU grep 3.x), awk (POSIX awk, gawk 5,
 * mawk) and jq 1.7. grep and jq write nothing and run nothing; awk programs can (`system()`,
 * pipes to and from commands, `print > file`, gawk's `@load` / `-l` extensions), so an awk
 * program is read for those; a program in a file (`-f`) cannot be seen and is judged as one
 * that runs code.
 */
import { type Effect, type Grammar, gnu } from "./command-grammar.js";

const GREP = gnu(
  "EFGPiywxcLlmoqsbHhnTZzUaIrRvV",
  "efmABCdD",
  "extended-regexp fixed-strings basic-regexp perl-regexp regexp= file= ignore-case no-ignore-case " +
    "word-regexp line-regexp null-data no-messages invert-match max-count= byte-offset line-number " +
    "no-line-number line-buffered with-filename no-filename label= only-matching quiet silent " +
    "binary-files= text directories= devices= recursive dereference-recursive include= exclude= " +
    "exclude-from= exclude-dir= files-without-match files-with-matches count initial-tab null " +
    "before-context= after-context= context= color? colour? binary",
  { numeric: true },
);

/** Where a `/` starts a regex literal rather than a division: after these (or at the start). */
const REGEX_AFTER = new Set(["", "(", ",", "{", "}", ";", "!", "~", "&", "|", "?", ":", "\n", "="]);

/**
 * An awk program's code with string and regex literals emptied (`""`, `//`), read left to right
 * as awk's lexer does, so neither can hide code from awkProgramEffect nor show code that is text.
 */
function awkCode(program: string): string {
  let out = "";
  let last = "";
  for (let i = 0; i < program.length; i++) {
    const ch = program[i] as string;
    if (ch === '"' || (ch === "/" && REGEX_AFTER.has(last))) {
      let inBracket = false;
      let j = i + 1;
      for (; j < program.length; j++) {
        const c = program[j];
        if (c === "\\") j++;
        else if (ch === "/" && c === "[") inBracket = true;
        else if (ch === "/" && c === "]") inBracket = false;
        else if (c === ch && !inBracket) break;
        else if (c === "\n") break;
      }
      out += `${ch}${ch}`;
      last = "x";
      i = j;
      continue;
    }
    out += ch;
    if (!/\s/.test(ch) || ch === "\n") last = ch;
  }
  return out;
}

/**
 * What an awk program does besides reading its input and printing: `exec` for `system(…)`, a
 * pipe to or from a command (`print | "cmd"`, `"cmd" | getline`, gawk's `|&`) and gawk's
 * `@load` / `@include`; `write` for output redirected to a file (`print > f`, `printf >> f`);
 * unknown for `getline < file` and for ARGV / ARGC (files the command line does not name). String literals and
 * regex literals are text; `||` is logical or; `>` outside a print statement is a comparison.
 */
export function awkProgramEffect(program: string): Effect | `unknown: ${string}` | null {
  const text = awkCode(program);
  if (text.includes("@")) return "exec"; // @load, @include, indirect calls (`@f()`)
  if (/\bsystem\s*\(/.test(text) || text.replace(/\|\|/g, " ").includes("|")) return "exec";
  if (/\bgetline\b[^;}\n]*</.test(text)) return "unknown: awk getline reads a file its program names";
  // Input files are ARGV[1..ARGC-1], read as the program runs: a program that touches them opens
  // files the command line does not name (`ARGV[1]=".e" "nv"`, `ARGV[ARGC++]=f`).
  if (/\bARG[VC]\b/.test(text)) return "unknown: awk program changes ARGV / ARGC, the files it reads";
  // `>` or `>>` after print / printf in the same statement, outside parentheses, redirects output.
  for (const statement of text.split(/[;{}\n]/)) {
    const at = statement.search(/\bprintf?\b/);
    if (at === -1) continue;
    let depth = 0;
    for (const ch of statement.slice(at)) {
      if (ch === "(") depth++;
      else if (ch === ")") depth--;
      else if (ch === ">" && depth <= 0) return "write";
    }
  }
  return null;
}

/** Options of awk and its variants: gawk's superset; mawk's `-W` takes a value. */
const AWK: Grammar = {
  short: "bcCgMNnOPrsStTVhL",
  shortValue: "FvfeEiIlW",
  shortOptional: "dDop",
  long: [
    ..."characters-as-bytes traditional copyright gen-pot bignum use-lc-numeric non-decimal-data optimize no-optimize posix re-interval sandbox lint-old version help".split(
      " ",
    ),
    ..."field-separator= assign= file= include= load= exec= source= dump-variables? debug? lint? profile? pretty-print?".split(
      " ",
    ),
  ],
  effects: {
    f: "exec",
    file: "exec",
    E: "exec",
    exec: "exec",
    i: "exec",
    include: "exec",
    l: "exec",
    load: "exec",
    d: "write",
    "dump-variables": "write",
    o: "write",
    "pretty-print": "write",
    p: "write",
    profile: "write",
    D: "exec",
    W: "exec",
    debug: "exec",
  },
  operands: (operands, options, values) => {
    const programs = values.filter(([o]) => o === "e" || o === "source").map(([, v]) => v);
    const fromFile = ["f", "file", "E", "exec"].some((o) => options.includes(o));
    if (!fromFile && programs.length === 0) programs.push(operands[0] ?? "");
    if (programs.some((p) => p === null)) return "unknown: the awk program is not literal";
    const effects = programs.map((p) => awkProgramEffect(p as string));
    return (
      effects.find((e) => e?.startsWith("unknown")) ??
      effects.find((e) => e === "exec") ??
      effects.find((e) => e !== null) ??
      null
    );
  },
};

/** jq reads files (`--rawfile`, `--slurpfile`, `-f`, `-L`) and prints; it writes and runs nothing. */
const JQ: Grammar = {
  permissive: true,
  shortValue: "fL",
};

export const TEXT_TOOLS: Record<string, Grammar> = {
  grep: GREP,
  egrep: GREP,
  fgrep: GREP,
  awk: AWK,
  gawk: AWK,
  mawk: AWK,
  nawk: AWK,
  jq: JQ,
};
