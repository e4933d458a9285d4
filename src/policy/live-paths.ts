/**
 * Live judgement of what a bash command reads below a directory, with the workspace's files as
 * they are (the evaluation's EvaluateContext.walk, live-walk.ts), where the lexical judgement can
 * only say what the command may read:
 *
 * - a listing's paths (`find src -name '*.ts' | xargs wc -l`: bash/listings.ts, BashPart `found`)
 *   and a glob the shell expands (`ls src/*.ts`; `ls -d` of a directory glob), which lexically ask when a name they may produce
 *   is one a deny or ask path rule names (`*.ts` names `.env.ts`), are judged as the files they
 *   can produce now: every entry below the listing's directory that its name filter may match
 *   (an over-approximation: `*` of a listing's filter spans `/`, any bracket is any character),
 *   every entry below a matched directory, and for a link both its path and what it leads to.
 *   Only for a script that writes nothing (scriptWritesNothing), only when the lexical answer is
 *   ask (a deny stays), only below /workspace, and only when the walk finds no link to a directory
 *   (a tool that follows links would read through it) and stays under MAX_WALK_ENTRIES; else the
 *   lexical answer stands.
 * - a recursive search (`grep -r`, `rg`) reads every file below its directories: each is judged
 *   as the literal path it is (recursiveReads), so `grep -r SECRET .` is denied where a `.env`
 *   exists, as `cat .env` is. Lexically (`warden policy explain`) the directory alone is judged.
 */

import { posix } from "node:path";
import { changeDirectory, DIRECTORY_CHANGERS, WORKSPACE } from "./bash/arguments.js";
import type { BashPart } from "./bash/parts.js";
import { ANY_TEXT, type Found } from "./command-pattern.js";
import type { WalkEntry } from "./live-walk.js";

/** Walks a directory in the sandbox (EvaluateContext.walk), memoised for one evaluation. */
export type Walk = (dir: string, hidden: boolean) => Promise<WalkEntry[] | null>;

/** Commands without a form in the command model that change no file (shell builtins). */
const NO_FILE_BUILTINS = new Set([
  "echo",
  "printf",
  "cd",
  "pushd",
  "popd",
  "read",
  "true",
  "false",
  "test",
  "[",
  ":",
]);

/**
 * Whether the script of `parts` writes no file, so that the files a listing in it produces are
 * those present before it runs: every command is one the command model describes with no effect
 * (or a builtin of NO_FILE_BUILTINS), none changes the shell's glob options (`shopt`, `set`), every
 * redirection writes to a stream or /dev/null, and nothing is opaque.
 */
export function scriptWritesNothing(parts: readonly BashPart[]): boolean {
  return parts.every((p) => {
    if (p.kind === "opaque") return false;
    if (p.kind === "write") return p.stream === true || p.target === "/dev/null";
    if (p.kind !== "command") return true;
    const name = posix.basename(p.argv[0]?.value ?? "");
    if (name === "shopt" || name === "set") return false;
    if (!p.form) return NO_FILE_BUILTINS.has(name);
    return !p.form.unknown && p.form.effects.length === 0 && p.form.writes.length === 0;
  });
}

/** The directory a glob's first wildcard lies below, and a RegExp over-approximating its matches. */
function globShape(target: string, found: Found | undefined): { base: string; regex: RegExp } | null {
  if (!target.startsWith(`${WORKSPACE}/`)) return null;
  // A parameter's value may hold `..`: only a listing's ANY_TEXT (any depth below) is walked.
  if (!found && target.includes(ANY_TEXT)) return null;
  const components = target.replace(/\/+$/, "").split("/");
  // The walk prints normalised paths: a `.`, `..` or empty component (`src/*/../../.env`) would
  // match none of them, though bash resolves it to a file.
  if (components.slice(1).some((c) => ["", ".", ".."].includes(c.replace(/\\(.)/g, "$1")))) return null;
  // A wildcard after a leading dot (`.*`, `.?`) may match `.` and `..` in bash (before 5.2's
  // globskipdots), which the walk never prints: `grep -r x src/.*` would read the workspace.
  if (!found && components.some((c) => /^\\?\./.test(c) && /[*?[]/.test(c.replace(/\\./g, "")))) return null;
  let k = 0;
  while (k < components.length && !/[*?[\u0001{]/.test((components[k] ?? "").replace(/\\./g, ""))) k++;
  // A listing's literal name (`find . -name known_hosts`): its directory is walked.
  if (k === components.length) {
    if (!found) return null;
    k--;
  }
  const base = components.slice(0, k).join("/").replace(/\\(.)/g, "$1");
  let source = "";
  for (const component of components.slice(k)) {
    source += "/";
    // bash: a wildcard never matches a name's leading dot (no dotglob: scriptWritesNothing).
    if (!found && /^[*?[]/.test(component)) source += "(?!\\.)";
    for (let i = 0; i < component.length; i++) {
      const c = component[i] as string;
      if (c === "\\") source += escapeRegex(component[++i] ?? "");
      else if (c === ANY_TEXT || (c === "*" && found)) source += ".*";
      else if (c === "*") source += "[^/]*";
      else if (c === "?") source += found ? "." : "[^/]";
      else if (c === "[") {
        const close = bracketEnd(component, i);
        if (close === null) return null;
        // One character (any, for a listing's filter; never `/` for bash).
        source += found ? "." : "[^/]";
        i = close;
      } else if (c === "{") return null;
      else source += escapeRegex(c);
    }
  }
  return { base, regex: new RegExp(`^${escapeRegex(base)}${source}$`, "s") };
}

/**
 * The index of the `]` that closes the bracket expression opening at `start` (POSIX.2 / fnmatch:
 * a leading `!` or `^`, a `]` first in the list, `[:class:]`, `[=e=]`, `[.s.]`), or null when it
 * is not closed or holds a backslash: then the glob is judged lexically.
 */
function bracketEnd(text: string, start: number): number | null {
  let j = start + 1;
  if (text[j] === "!" || text[j] === "^") j++;
  if (text[j] === "]") j++;
  while (j < text.length) {
    const c = text[j] as string;
    if (c === "\\") return null;
    if (c === "[" && /[:=.]/.test(text[j + 1] ?? "")) {
      const close = text.indexOf(`${text[j + 1]}]`, j + 2);
      if (close === -1) return null;
      j = close + 2;
    } else if (c === "]") return j;
    else j++;
  }
  return null;
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/**
 * The paths an argument glob `target` (a listing's when `found`) can produce in the sandbox now
 * (see module doc), links also as what they lead to (`resolve`), or null when that cannot be told
 * live (the lexical judgement stands).
 */
export async function livePaths(
  target: string,
  found: Found | undefined,
  walk: Walk,
  resolve: (path: string) => Promise<string>,
): Promise<string[] | null> {
  const shape = globShape(target, found);
  if (!shape) return null;
  const base = await resolve(shape.base).catch(() => null);
  // A link on the way to the directory: its entries are named below another directory.
  if (base !== shape.base) return null;
  const entries = await walk(base, found ? found.hidden : true);
  if (!entries) return null;
  if (entries.some((e) => e.type === "l" && e.to === "d")) return null;
  const matched = entries.filter((e) => e !== entries[0] && shape.regex.test(e.path));
  const dirs = matched.filter((e) => e.type === "d").map((e) => `${e.path}/`);
  const out = new Set<string>();
  for (const e of entries) if (matched.includes(e) || dirs.some((d) => e.path.startsWith(d))) out.add(e.path);
  // A name is not always passed whole: xargs splits its input at blanks and reads quotes and
  // backslashes, bash splits an unquoted `$(…)` or loop variable `$f` at blanks and globs it
  // again (`src/x .env` may become `src/x` and `.env`, `src/id_rs[a]` may become `src/id_rsa`).
  // Nor always as a path: ls prints bare names, git ls-files and rg --files paths without `./`,
  // so a name beginning with `-` reaches the next command as an option (`--files0-from=.l`
  // makes wc and du read the files that .l names).
  if ([...out].some((path) => /[\s'"\\*?[]|\/-/.test(path))) return null;
  for (const path of [...out]) {
    const entry = entries.find((e) => e.path === path);
    if (entry?.type === "l") out.add(await resolve(path).catch(() => path));
  }
  return [...out];
}

/** grep's options whose value is the next word (GNU grep(1) 3.8), long ones without their dashes. */
const GREP_VALUE = {
  short: "efmABCdD",
  long: (
    "regexp file max-count after-context before-context context directories devices include exclude " +
    "exclude-dir exclude-from label binary-files group-separator"
  ).split(" "),
};

/** rg's options whose value is the next word (ripgrep 13, rg(1)), long ones without their dashes. */
const RG_VALUE = {
  short: "efgtTmABCjMErd",
  long: (
    "regexp file glob iglob type type-not max-count after-context before-context context threads " +
    "max-columns encoding replace max-depth max-filesize type-add type-clear colors color sort sortr pre " +
    "pre-glob ignore-file path-separator context-separator engine dfa-size-limit regex-size-limit " +
    "field-match-separator field-context-separator"
  ).split(" "),
};

/** A recursive search and the directories whose every file it reads. */
export interface RecursiveRead {
  part: Extract<BashPart, { kind: "command" }>;
  /**
   * Absolute directories (or files) it searches; null when they are not known here (a relative
   * operand after a `cd` or under a wrapper's directory that is not literal): never allowed.
   */
  dirs: string[] | null;
  /** It reads dot files and walks dot directories (grep -r; rg always: see recursiveReads). */
  hidden: boolean;
  /** It follows links to directories below its directories (grep -R, rg -L / --follow). */
  follows: boolean;
}

/** The long option `word` (`--name[=value]`) may be, as getopt_long reads an unambiguous prefix. */
function longNames(word: string, names: readonly string[]): string[] {
  const name = word.slice(2).split("=")[0] as string;
  const exact = names.filter((n) => n === name);
  return exact.length > 0 ? exact : names.filter((n) => n.startsWith(name));
}

/**
 * One command's options and operands as grep (getopt_long: clustered short options, a value
 * attached or the next word, unambiguous prefixes of long options) or rg reads them: whether it
 * recurses, whether its pattern comes from an option (`-e`, `-f`), and its other words.
 */
function searchWords(grep: boolean, words: readonly (string | null)[]) {
  const values = grep ? GREP_VALUE : RG_VALUE;
  const longs = [...values.long, "recursive", "dereference-recursive", "hidden", "files", "follow"];
  let follows = false;
  let recursive = !grep;
  let listsOnly = false;
  let fromOption = false;
  const operands: (string | null)[] = [];
  let options = true;
  // grep's -d / --directories ACTION (argmatch takes an unambiguous prefix): recurse unless read or skip.
  const directories = (value: string | null | undefined) => {
    if (value === null || !["read", "skip", "rea", "ski", "sk", "s"].includes(value ?? "read"))
      recursive = true;
  };
  let expands = false;
  for (let k = 0; k < words.length; k++) {
    const w = words[k] as string | null;
    // A word that expands may be any option: it may recurse, or give the pattern.
    if (w === null && options) [recursive, expands, follows] = [true, true, true];
    if (w === null || !options || w === "-" || !w.startsWith("-")) {
      operands.push(w);
      continue;
    }
    if (w === "--") {
      options = false;
      continue;
    }
    if (w.startsWith("--")) {
      const names = longNames(w, longs);
      const inline = w.includes("=") ? w.slice(w.indexOf("=") + 1) : undefined;
      const takes = names.some((n) => values.long.includes(n));
      const value = takes && inline === undefined ? (words[++k] ?? "") : inline;
      if (grep && names.some((n) => n === "recursive" || n === "dereference-recursive")) recursive = true;
      if (names.includes(grep ? "dereference-recursive" : "follow")) follows = true;
      if (grep && names.includes("directories")) directories(value);
      if (!grep && names.length === 1 && names[0] === "files") listsOnly = true;
      if (names.some((n) => n === "regexp" || n === "file")) fromOption = true;
      continue;
    }
    for (let i = 1; i < w.length; i++) {
      const c = w[i] as string;
      if (grep && (c === "r" || c === "R")) recursive = true;
      if (c === (grep ? "R" : "L")) follows = true;
      if (!values.short.includes(c)) continue;
      const value = i + 1 < w.length ? w.slice(i + 1) : (words[++k] ?? "");
      if (c === "e" || c === "f") fromOption = true;
      if (grep && c === "d") directories(value);
      break;
    }
  }
  const rest = fromOption ? operands : operands.slice(1);
  // The words it searches (null: one that expands); with none named, the working directory.
  const named = expands ? operands : rest;
  return { recursive: recursive && !listsOnly, follows, operands: rest.length > 0 ? named : [...named, "."] };
}

/**
 * Whether git's `words` (after `git`) are a `git grep` that reads files git does not track, as
 * grep -r reads them: `--no-index`, `--untracked` (or a prefix parse-options takes), a
 * `grep.fallbackToNoIndex` setting, or a word that expands. Its pathspecs are not read: the
 * working directory is searched.
 */
function gitGrepUntracked(words: readonly (string | null)[]): boolean {
  const at = words.indexOf("grep");
  if (at === -1) return false;
  return words.some(
    (w, k) =>
      w === null ||
      /fallbacktonoindex/i.test(w) ||
      (k > at && /^--[a-z-]{3,}$/.test(w) && ["--no-index", "--untracked"].some((o) => o.startsWith(w))),
  );
}

/**
 * The recursive searches among `parts`: `grep` / `egrep` / `fgrep` with `-r`, `-R`, `--recursive`,
 * `--dereference-recursive` or `--directories=recurse` (also as getopt_long's prefixes and
 * argmatch's abbreviations: `--recur`, `-d rec`), `rgrep`, and `rg` (not `--files`, which reads no
 * file), `git grep` of untracked files (gitGrepUntracked), with their operands after the pattern
 * (none: the working directory). A relative operand
 * is below each directory the script may be in (after `cd`: changeDirectory) and a wrapper's
 * (`env -C DIR`); where that is not known, `dirs` is null. rg is judged as reading dot files too
 * (`hidden`): an ignore file's whitelist line (`!.env` in `.ignore`, `.rgignore`, `.gitignore`)
 * makes rg search a dot file without `--hidden`.
 */
export function recursiveReads(parts: readonly BashPart[]): RecursiveRead[] {
  let cwds: string[] | null = [WORKSPACE];
  const out: RecursiveRead[] = [];
  for (const part of parts) {
    if (part.kind !== "command") continue;
    const name = posix.basename(part.argv[0]?.value ?? "");
    if (DIRECTORY_CHANGERS.has(part.argv[0]?.value ?? "")) cwds = changeDirectory(part.argv, cwds);
    const grep = ["grep", "egrep", "fgrep", "rgrep"].includes(name);
    const words = part.argv.slice(1).map((w) => (w.value !== null && !w.expands ? w.value : null));
    const untracked = name === "git" && gitGrepUntracked(words);
    if (!grep && name !== "rg" && !untracked) continue;
    const search = untracked
      ? { recursive: true, follows: false, operands: ["."] }
      : searchWords(grep, words);
    if (!search.recursive && name !== "rgrep") continue;
    // An expanding operand is judged as the glob it is (bash/arguments.ts); the literal ones are walked.
    const operands = search.operands.filter((o) => o !== null);
    const here = (dir: string) =>
      part.cwd === undefined ? dir : part.cwd === null ? null : posix.resolve(dir, part.cwd);
    let dirs: string[] | null = [];
    for (const operand of operands) {
      if (operand.startsWith("/")) dirs?.push(posix.resolve(operand));
      else
        for (const cwd of cwds ?? [null]) {
          const base = cwd === null ? null : here(cwd);
          dirs = base === null || dirs === null ? null : [...dirs, posix.resolve(base, operand)];
        }
    }
    out.push({
      part,
      dirs: dirs === null ? null : [...new Set(dirs)],
      hidden: true,
      follows: search.follows,
    });
  }
  return out;
}
