/**
 * The command model's build tools (commands/model.ts): GNU make 4.3 (its manual's "Options
 * Summary" and "Overriding Variables"). A makefile, an `--eval` text, an include directory and a
 * command-line variable assignment that make runs are the exec effect; allowing `make` grants the
 * project's own build, not one its command line redefines.
 */
import { type Effect, type Grammar, words } from "./grammar.js";

/**
 * Variables GNU make itself runs or reads (make manual, "Choosing the Shell", "Variables Used by
 * Implicit Rules" commands, "Other Special Variables"): assigning one on the command line changes
 * the program every recipe or implicit rule runs, or make's own options and makefiles.
 */
const MAKE_OWN_VARIABLES = new Set(
  (
    "SHELL .SHELLFLAGS MAKESHELL MAKEFLAGS MFLAGS GNUMAKEFLAGS MAKEFILES MAKE MAKECMDGOALS " +
    ".RECIPEPREFIX .DEFAULT_GOAL .INCLUDE_DIRS .EXTRA_PREREQS VPATH AR AS CC CXX CPP FC M4 PC " +
    "CO GET LEX YACC LINT MAKEINFO TEX TEXI2DVI WEAVE CWEAVE TANGLE CTANGLE RM LD"
  ).split(" "),
);

/**
 * make's command-line variable assignments (`NAME=v`, `:=`, `::=`, `:::=`, `+=`, `?=`, `!=`): an
 * assignment overrides every ordinary assignment of NAME in the makefiles (make manual,
 * "Overriding Variables"), and recipes run what variables hold, so an assignment is the exec effect
 * unless it gives a whole number (`V=1`, `DEBUG=0`) or nothing, with `=` or `:=`, to a variable
 * make does not itself run or read (MAKE_OWN_VARIABLES). `!=` runs its value in the shell at once.
 */
export function makeAssignments(operands: string[]): Effect | null {
  for (const operand of operands) {
    const assignment = /^([^=:!?+]*?)\s*(::?:?=|[+?!]?=)(.*)$/s.exec(operand);
    if (!assignment) continue;
    const [, name, operator, value] = assignment as unknown as [string, string, string, string];
    const plain = (operator === "=" || operator === ":=") && /^\d*$/.test(value);
    if (!plain || MAKE_OWN_VARIABLES.has(name.trim())) return "exec";
  }
  return null;
}

/**
 * GNU make. Every environment variable becomes a make variable, which overrides make's built-in
 * defaults (`RM`, `CC`) and a makefile's `?=` ("Variables from the Environment"): a variable set
 * before `make` (`RM='sh -c …' make clean`) is opaque. `-e` lets the environment override every
 * assignment: the exec effect. MFLAGS, GNUMAKEFLAGS and MAKESHELL (besides MAKEFLAGS, MAKEFILES
 * and SHELL of DANGEROUS_VARIABLES) change make's own options and shell.
 */
const MAKE: Grammar = {
  short: "BdeiknpqrRsStvwL",
  shortValue: "CfIjlOoWE",
  long: words(
    "always-make directory= debug? environment-overrides eval= file= makefile= ignore-errors " +
      "include-dir= jobs? keep-going load-average? check-symlink-times just-print dry-run recon " +
      "old-file= assume-old= output-sync? print-data-base question no-builtin-rules " +
      "no-builtin-variables shuffle? silent quiet no-keep-going stop touch trace version " +
      "print-directory no-print-directory what-if= new-file= assume-new= " +
      "warn-undefined-variables help",
  ),
  operands: makeAssignments,
  environment: ["MFLAGS", "GNUMAKEFLAGS", "MAKESHELL", "*"],
  effects: {
    e: "exec",
    "environment-overrides": "exec",
    E: "exec",
    eval: "exec",
    f: "exec",
    file: "exec",
    makefile: "exec",
    I: "exec",
    "include-dir": "exec",
  },
};

export const BUILD_TOOLS: Record<string, Grammar> = { make: MAKE };
