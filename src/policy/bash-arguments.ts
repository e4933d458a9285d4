/**
 * Which words of a command may name files, for deny / ask path rules (bash-analyze.ts): literal
 * operands, option values (attached anywhere in a short-option cluster), git pathspec globs, and
 * where the working directory a `cd` leaves makes relative paths resolve.
 */
import { posix } from "node:path";
import { globEscape } from "./bash-words.js";
import { ANY_TEXT, type ArgWord } from "./command-pattern.js";
import { gitObjectReads } from "./git-revisions.js";
import { SANDBOX_HOME, wordPathGlobs } from "./path-overlap.js";
import { searchGlobs } from "./search-glob.js";

/** Where relative paths of a script resolve (the sandbox's workspace). */
export const WORKSPACE = "/workspace";

/** An operand the script does not spell (xargs input): any path. */
export const ANY_UNKNOWN_PATH: ArgumentPath = { target: ANY_TEXT, glob: true };

/** Wrappers that run their payload with operands taken from input or a search (xargs, find -exec, fd -x). */
export const FEEDING_WRAPPERS = new Set(["xargs", "find", "fd", "fdfind"]);

/** Commands none of whose operands name a file: an expanding word there is no path. */
export const NO_PATH_OPERANDS = new Set([
  "echo",
  "printf",
  "true",
  "false",
  "seq",
  "date",
  "sleep",
  "expr",
  "export",
  "local",
  "declare",
  "test",
  "[",
  "basename",
  "dirname",
  "cd",
  "pushd",
  "exit",
  "return",
  "shift",
  "set",
  "read",
  "kill",
  "wait",
]);

/**
 * A literal file argument, or an expanding word as the glob of every path it may become; `why`
 * says why a glob stands for any path (a git object tied to no path: git-revisions.ts).
 */
export type ArgumentPath = { target: string; glob?: boolean; why?: string };

/**
 * Files a command reads that its words do not spell: `unknownOperands`, operands a feeding wrapper
 * adds (FEEDING_WRAPPERS); `readsAny`, why its form reads names from a list (FormVerdict.readsAny).
 */
export interface UnseenOperands {
  unknownOperands?: boolean;
  readsAny?: string | undefined;
  /** FormVerdict.selects: globs the command's options name files by (`rg -g`): search-glob.ts. */
  selects?: { word: ArgWord; caseless: boolean }[] | undefined;
}

/**
 * The arguments of a command that may name files (and any path for `unseen` operands): literal words; the value of `--option=value`
 * and of a `key=value` operand (`dd if=.env`),
 * of an attached short option after any letter of a cluster (`-rf.env`: `f.env` and `.env`), after a
 * `:` (`HEAD:.env`); git pathspec globs (gitPathspecGlob); and words the shell
 * expands, as globs (path-overlap.ts), an option's value (`values`: FormVerdict.values) even where
 * the command's operands name no file (`date -f .en?`), and an option word's attached value
 * (`grep --file=.en?`) as a glob too. Used so `cat .env`, `cat .en?` and `git show HEAD:.env`
 * meet a deny rule on `.env` like `read .env` does.
 */
export function argumentPaths(
  argv: readonly ArgWord[],
  values: readonly ArgWord[] = [],
  unseen: UnseenOperands = {},
): ArgumentPath[] {
  const paths: ArgumentPath[] = [];
  const name = argv[0]?.value ?? "";
  const base = name.slice(name.lastIndexOf("/") + 1);
  // Under xargs (or find -exec / fd -x) the command gets operands the script does not spell: any path.
  if (unseen.unknownOperands && !NO_PATH_OPERANDS.has(base)) paths.push(ANY_UNKNOWN_PATH);
  // Names the form reads from a list or stdin (`sort --files0-from=-`): any path.
  if (unseen.readsAny) paths.push({ ...ANY_UNKNOWN_PATH, why: `${base}: ${unseen.readsAny}` });
  for (const { word, caseless } of unseen.selects ?? []) {
    // Any letter of a case-insensitive glob may be either case: it is taken as any character.
    const glob = word.value === null || word.expands ? ANY_TEXT : word.value;
    for (const target of searchGlobs(WORKSPACE, caseless ? glob.replace(/[A-Za-z]/g, "?") : glob))
      paths.push({
        target,
        glob: true,
        why: `${base}: its glob names the files it searches, ignored ones too`,
      });
  }
  const operandsArePaths = !NO_PATH_OPERANDS.has(base);
  for (const word of argv.slice(1)) {
    if (word.value === null || word.expands) {
      if (word.glob === undefined || (!operandsArePaths && !values.includes(word))) continue;
      for (const glob of [word.glob, ...attachedValueGlobs(word.glob)])
        for (const target of wordPathGlobs(glob, WORKSPACE) ?? [ANY_TEXT]) {
          // `~/x` and `{a,b}` expand to plain paths: those are judged as the literal paths they are.
          const wild = /[*?[\u0001]/.test(target.replace(/\\./g, ""));
          paths.push(wild ? { target, glob: true } : { target: target.replace(/\\(.)/g, "$1") });
        }
      continue;
    }
    const v = word.value;
    if (v === "" || v.includes("\0")) continue;
    if (v.startsWith("--")) {
      if (v.includes("=")) paths.push({ target: v.slice(v.indexOf("=") + 1) });
    } else if (v.startsWith("-") && v.length > 2) {
      // A short-option cluster may end in an attached value at any point (`-rf.env`, `-0a.env`), and
      // a single-dash long option may carry one after `=` (`-coverprofile=.env`): every suffix counts.
      // A value starts after some option letter: no later than the first character that is not one.
      for (let k = 2; k < v.length && /[A-Za-z0-9]/.test(v[k - 1] as string); k++)
        paths.push({ target: v.slice(k) });
      if (v.includes("=")) paths.push({ target: v.slice(v.indexOf("=") + 1) });
    } else if (!v.startsWith("-")) {
      paths.push({ target: v });
      const pathspec = base === "git" ? gitPathspecGlob(v) : null;
      if (pathspec) paths.push({ target: pathspec, glob: true });
      // `dd if=F`, `make -f x VAR=F`: the value of a key=value operand may be a path too.
      if (v.includes("=")) paths.push({ target: v.slice(v.indexOf("=") + 1) });
    }
    const colon = v.indexOf(":");
    if (colon !== -1 && colon < v.length - 1) paths.push({ target: v.slice(colon + 1) });
  }
  // The files git reads from its object store by the object names it is given (`:0:.env`).
  for (const read of base === "git" ? gitObjectReads(argv) : []) {
    const absolute = !read.glob || read.target.startsWith("/") || read.target.startsWith(ANY_TEXT);
    const path = absolute ? read : { ...read, target: `${WORKSPACE}/${read.target}` };
    if (!paths.some((p) => p.target === path.target && !p.glob === !path.glob)) paths.push(path);
  }
  return paths.filter((p) => p.target !== "");
}

/**
 * The values an expanding option word may carry attached, as globs: after each option letter of a
 * cluster (`-f.en?`) and after `=` (`--file=.en?`); none for a word that is not an option. bash
 * matches the whole word against file names (`-f.en?` matches a file named `-f.env`), and the
 * command then reads the value part.
 */
function attachedValueGlobs(glob: string): string[] {
  if (!glob.startsWith("-") || glob.length < 3) return [];
  const out: string[] = [];
  if (!glob.startsWith("--"))
    for (let k = 2; k < glob.length && /[A-Za-z0-9]/.test(glob[k - 1] as string); k++)
      out.push(glob.slice(k));
  const eq = glob.indexOf("=");
  if (eq !== -1 && eq < glob.length - 1) out.push(glob.slice(eq + 1));
  return out;
}

/**
 * The absolute glob of every path a git pathspec operand may match when git expands it itself
 * (`'.e*'`, `':(glob)**​/.e*'`, `':!x'`), or null for a plain path. git's `*` also matches `/`, and
 * a pathspec matches at any depth below the workspace: each `*` and the start become ANY_TEXT.
 */
function gitPathspecGlob(word: string): string | null {
  if (!/[*?[]/.test(word) && !/^:[(!^/]/.test(word)) return null;
  const rest = word.replace(/^:(\([^)]*\)|[!^/]*)/, "");
  return `${WORKSPACE}/${ANY_TEXT}${rest.replace(/\*/g, ANY_TEXT)}`;
}

/** More possible working directories than this and a relative path may be anywhere. */
const MAX_DIRECTORIES = 8;

/**
 * The directories a `cd` / `pushd` part may leave the shell in, from each of `dirs` (null: any).
 * The old ones stay possible too: the cd may fail or run in a subshell (`cd x || …`, `(cd x)`).
 */
export function changeDirectory(argv: readonly ArgWord[], dirs: string[] | null): string[] | null {
  if (dirs === null) return null;
  const name = argv[0]?.value ?? "";
  const operands = argv.slice(1).filter((w) => !/^-[LPe@]+$/.test(w.value ?? "") && w.value !== "--");
  if (name === "popd" || operands.length > 1) return null;
  const target = operands[0];
  if (
    target &&
    (target.value === null || target.expands || target.value === "-" || target.value.startsWith("+"))
  )
    return null;
  // A relative target may be found through CDPATH (DANGEROUS_VARIABLES makes setting it opaque).
  const to = target?.value ?? SANDBOX_HOME;
  const next = new Set(dirs);
  for (const dir of dirs) next.add(posix.resolve(dir, to));
  return next.size > MAX_DIRECTORIES ? null : [...next];
}

/**
 * An argument judged in the possible working directories `dirs` (null: any directory, so its
 * relative path is matched as the glob of that path anywhere: path-overlap.ts).
 */
export function inDirectories<T extends { target: string; glob?: boolean; identity: string | null }>(
  p: T,
  dirs: string[] | null,
): T[] {
  const relative = p.glob
    ? p.target.startsWith(`${WORKSPACE}/`)
      ? p.target.slice(WORKSPACE.length + 1)
      : null
    : p.target.startsWith("/")
      ? null
      : globEscape(p.target);
  if (relative === null) return [{ ...p, identity: null }];
  // A literal `..` climbs from the directory (`cd a; cat ../private/x` is /workspace/private/x):
  // resolved, never matched as spelled. From any directory, what follows the climb is in any one.
  if (!p.glob && /(^|\/)\.\.(\/|$)/.test(p.target)) {
    const climbed = globEscape(posix.normalize(p.target).replace(/^(\.\.\/)+/, ""));
    const targets =
      dirs === null ? [`${ANY_TEXT}/${climbed}`] : dirs.map((d) => globEscape(posix.resolve(d, p.target)));
    return targets.map((target) => ({ ...p, identity: null, target, glob: true }));
  }
  const bases = dirs === null ? [ANY_TEXT] : dirs.map(globEscape);
  return bases.map((base) => ({ ...p, identity: null, target: `${base}/${relative}`, glob: true }));
}
