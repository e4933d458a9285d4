/**
 * The command model's text tools (commands/model.ts): grep (GNU grep 3.x), awk (POSIX awk, gawk 5,
 * mawk) and jq 1.7. grep and jq write nothing and run nothing; awk programs can (`system()`,
 * pipes to and from commands, `print > file`, gawk's `@load` / `-l` extensions), so an awk
 * program is read for those with awk's own lexical rules (commands/awk-program.ts), and the files it
 * prints to are written paths like `sort -o F`; a program in a file (`-f`) cannot be seen and is
 * judged as one that runs code.
 */
import { readAwkProgram } from "./awk-program.js";
import { type Effect, type Grammar, gnu } from "./grammar.js";

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

/** What an awk program does (commands/awk-program.ts): an effect, "unknown: why", or null. */
export function awkProgramEffect(program: string): Effect | `unknown: ${string}` | null {
  return readAwkProgram(program).effect;
}

/** The program texts of an awk command line (`-e` / `--source` values, else the first operand). */
function awkPrograms(
  operands: string[],
  options: string[],
  values: [string, string | null][],
): (string | null)[] {
  const programs = values.filter(([o]) => o === "e" || o === "source").map(([, v]) => v);
  const fromFile = ["f", "file", "E", "exec"].some((o) => options.includes(o));
  if (!fromFile && programs.length === 0) programs.push(operands[0] ?? "");
  return programs;
}

/** gawk's options that write a file, and the file each writes when given no name. */
const AWK_OUTPUT_OPTIONS: Record<string, string> = {
  d: "awkvars.out",
  "dump-variables": "awkvars.out",
  o: "awkprof.out",
  "pretty-print": "awkprof.out",
  p: "awkprof.out",
  profile: "awkprof.out",
};

/**
 * Options of awk and its variants: gawk's superset (as `gawk --help` 5.2 lists them: `-I` is
 * `--trace`, a flag; `-L` is `--lint` with an optional attached value); mawk's `-W` takes a value.
 */
const AWK: Grammar = {
  short: "bcCgMNnOPrsStVhI",
  shortValue: "FvfeEilW",
  shortOptional: "dDopL",
  long: [
    ..."characters-as-bytes traditional copyright gen-pot bignum use-lc-numeric non-decimal-data optimize no-optimize posix re-interval sandbox lint-old version help trace".split(
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
    const programs = awkPrograms(operands, options, values);
    if (programs.some((p) => p === null)) return "unknown: the awk program is not literal";
    const effects = programs.map((p) => awkProgramEffect(p as string));
    return (
      effects.find((e) => e?.startsWith("unknown")) ??
      effects.find((e) => e === "exec") ??
      effects.find((e) => e !== null) ??
      null
    );
  },
  // The files `print > F` names, and those gawk's -d / -p / -o write, meet path rules.
  operandWrites: (operands, options, values) => {
    const files = awkPrograms(operands, options, values).flatMap((p) =>
      p === null ? [] : readAwkProgram(p).writes,
    );
    for (const option of new Set(options)) {
      const fallback = AWK_OUTPUT_OPTIONS[option];
      if (fallback === undefined) continue;
      const named = values.filter(([o]) => o === option).map(([, v]) => v);
      files.push(...(named.length > 0 ? named : [fallback]));
    }
    return files;
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
