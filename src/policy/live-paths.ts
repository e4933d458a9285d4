/**
 * Live judgement of what a bash command reads below a directory, with the workspace's files as
 * they are (the evaluation's EvaluateContext.walk, live-walk.ts), where the lexical judgement can
 * only say what the command may read:
 *
 * - a listing's paths (`find src -name '*.ts' | xargs wc -l`: bash-listings.ts, BashPart `found`)
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
import { DIRECTORY_CHANGERS, WORKSPACE } from "./bash-arguments.js";
import type { BashPart } from "./bash-parts.js";
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
  // A name is not always passed whole: xargs splits its input at blanks and reads quotes and
  // backslashes, bash splits an unquoted `$(…)` or loop variable `$f` at blanks and globs it
  // again (`src/x .env` may become `src/x` and `.env`, `src/id_rs[a]` may become `src/id_rsa`).
  if (matched.some((e) => /[\s'"\\*?[]/.test(e.path))) return null;
  const dirs = matched.filter((e) => e.type === "d").map((e) => `${e.path}/`);
  const out = new Set<string>();
  for (const e of entries) if (matched.includes(e) || dirs.some((d) => e.path.startsWith(d))) out.add(e.path);
  for (const path of [...out]) {
    const entry = entries.find((e) => e.path === path);
    if (entry?.type === "l") out.add(await resolve(path).catch(() => path));
  }
  return [...out];
}

/** grep's options whose value is the next word (GNU grep(1) 3.8). */
const GREP_VALUE = new Set(
  (
    "-e -f -m -A -B -C -d -D --regexp --file --max-count --after-context --before-context --context " +
    "--directories --devices --include --exclude --exclude-dir --exclude-from --label --binary-files"
  ).split(" "),
);

/** rg's options whose value is the next word (ripgrep 13, rg(1)). */
const RG_VALUE = new Set(
  (
    "-e -f -g -t -T -m -A -B -C -j -M -E -r -d --regexp --file --glob --iglob --type --type-not " +
    "--max-count --after-context --before-context --context --threads --max-columns --encoding " +
    "--replace --max-depth --max-filesize --type-add --type-clear --colors --color --sort --sortr --pre " +
    "--pre-glob --ignore-file --path-separator --context-separator --engine --dfa-size-limit " +
    "--regex-size-limit --field-match-separator --field-context-separator"
  ).split(" "),
);

/** A recursive search and the directories whose every file it reads. */
export interface RecursiveRead {
  part: Extract<BashPart, { kind: "command" }>;
  /** Absolute directories (or files) it searches; relative ones are below /workspace. */
  dirs: string[];
  /** It reads dot files and walks dot directories (grep -r, rg --hidden / -uu / -.). */
  hidden: boolean;
}

/**
 * The recursive searches among `parts`: `grep` / `egrep` / `fgrep` with `-r`, `-R`, `--recursive`,
 * `--dereference-recursive` or `--directories=recurse`, `rgrep`, and `rg` (not `--files`, which
 * reads no file), with their operands after the pattern (none: the working directory; after a
 * `cd` that is not known here, so none is judged).
 */
export function recursiveReads(parts: readonly BashPart[]): RecursiveRead[] {
  const moved = parts.some((p) => p.kind === "command" && DIRECTORY_CHANGERS.has(p.argv[0]?.value ?? ""));
  const out: RecursiveRead[] = [];
  for (const part of parts) {
    if (part.kind !== "command" || part.cwd !== undefined) continue;
    const name = posix.basename(part.argv[0]?.value ?? "");
    const words = part.argv.slice(1).map((w) => (w.value !== null && !w.expands ? w.value : null));
    if (words.includes(null)) continue;
    const grep = ["grep", "egrep", "fgrep", "rgrep"].includes(name);
    if (!grep && name !== "rg") continue;
    let recursive = name === "rg" || name === "rgrep";
    let hidden = grep;
    let pattern = true;
    const operands: string[] = [];
    let options = true;
    for (let k = 0; k < words.length; k++) {
      const w = words[k] as string;
      if (options && w === "--") options = false;
      else if (options && w.startsWith("-") && w.length > 1) {
        const option = w.split("=")[0] as string;
        if (grep && (/^-[^-]*[rR]/.test(w) || /^--(dereference-)?recursive$|^--directories=recurse$/.test(w)))
          recursive = true;
        if (grep && w === "-d" && words[k + 1] === "recurse") recursive = true;
        if (!grep && (w === "--hidden" || /^-[^-]*[.u]/.test(w))) hidden = true;
        if (!grep && w === "--files") recursive = false;
        if (["-e", "-f", "--regexp", "--file"].includes(option)) pattern = false;
        if ((grep ? GREP_VALUE : RG_VALUE).has(w)) k++;
      } else if (pattern) pattern = false;
      else operands.push(w);
    }
    if (!recursive) continue;
    if (operands.length === 0 && moved) continue;
    const dirs = (operands.length > 0 ? operands : ["."]).map((o) => posix.resolve(WORKSPACE, o));
    out.push({ part, dirs, hidden });
  }
  return out;
}
