/**
 * Which words of a command may name files, for deny / ask path rules (bash/analyze.ts): literal
 * operands, option values (attached anywhere in a short-option cluster), git pathspec globs, and
 * where the working directory a `cd` leaves makes relative paths resolve.
 */
import { posix } from "node:path";
import type { Node } from "web-tree-sitter";
import { omitUndefined } from "../../util/index.js";
import { ANY_TEXT, type ArgWord, type Found } from "../command-pattern.js";
import { gitObjectReads } from "../commands/git-revisions.js";
import { SANDBOX_HOME, wordPathGlobs } from "../path-overlap.js";
import { searchGlobs } from "../search-glob.js";
import { type Listing, listingOf, substitutionListing } from "./listings.js";
import { echoedText, globEscape, globOf, wordOf } from "./words.js";

/** Where relative paths of a script resolve (the sandbox's workspace). */
export const WORKSPACE = "/workspace";

/** An operand the script does not spell (xargs input): any path. */
const ANY_UNKNOWN_PATH: ArgumentPath = {
  target: ANY_TEXT,
  glob: true,
  word: "(an operand from input)",
};

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
 * says why a glob stands for any path (a git object tied to no path: commands/git-revisions.ts). `found`:
 * a path a listing printed (foundPaths), directly in the directory it searched (`here`) or below
 * it (`below`); `word`: the word as written, for display.
 */
export type ArgumentPath = { target: string; glob?: boolean; why?: string; found?: Found; word?: string };

/**
 * The paths `listing` prints, as globs: for each directory D and name filter N, `D/N` (here) and
 * `D/…/N` (below); with no filter any name; `split`: Found.split. Names match as the listing's tool matches them
 * (Found.hidden, path-overlap.ts); match.ts judges them.
 */
function foundPaths(listing: Listing, word: string, split = false): ArgumentPath[] {
  const out: ArgumentPath[] = [];
  const at = (depth: Found["depth"]): Found => ({
    depth,
    hidden: listing.hidden,
    ...(split ? { split } : {}),
  });
  for (const dir of listing.dirs) {
    const base = globEscape(posix.resolve(WORKSPACE, dir));
    for (const name of listing.names ?? ["*"]) {
      out.push({ target: `${base}/${name}`, glob: true, found: at("here"), word });
      out.push({ target: `${base}/${ANY_TEXT}/${name}`, glob: true, found: at("below"), word });
    }
  }
  return out;
}

/**
 * The argv of a command's word nodes (command name first): each word's value, as written (`raw`),
 * and for a word the shell expands the glob of what it may become (`vars`: the loop variables in
 * scope, bash/loops.ts) and the paths a listing in it prints (`$(find …)`: foundPaths).
 */
export function argvOf(words: readonly Node[], vars: ReadonlyMap<string, string>): ArgWord[] {
  const argv: ArgWord[] = [];
  for (const child of words) {
    const node = child.type === "command_name" ? child.namedChildren[0] : child;
    if (!node) continue;
    const echoed = echoedText(node);
    const word: ArgWord = {
      ...(echoed === null ? wordOf(node) : { value: echoed, expands: false }),
      raw: node.text,
    };
    if (word.value === null || word.expands) {
      word.glob = globOf(node, vars);
      const printed = substitutionListing(node);
      if (printed) word.found = foundPaths(printed, node.text, node.type !== "string");
    }
    argv.push(word);
  }
  return argv;
}

/**
 * Files a command reads that its words do not spell: `readsAny`, why its form reads names from a
 * list (FormVerdict.readsAny). (Operands a feeding wrapper adds are fedOperands'.)
 */
export interface UnseenOperands {
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
    if (word.found) {
      if (operandsArePaths || values.includes(word))
        for (const { target, found } of word.found)
          paths.push({ target, glob: true, ...omitUndefined({ found }), word: word.raw ?? "?" });
      continue;
    }
    if (word.value === null || word.expands) {
      if (word.glob === undefined || (!operandsArePaths && !values.includes(word))) continue;
      const raw = word.raw ?? "?";
      for (const glob of [word.glob, ...attachedValueGlobs(word.glob)])
        for (const target of wordPathGlobs(glob, WORKSPACE) ?? [ANY_TEXT]) {
          // `~/x` and `{a,b}` expand to plain paths: those are judged as the literal paths they are.
          const wild = /[*?[\u0001]/.test(target.replace(/\\./g, ""));
          paths.push(
            wild ? { target, glob: true, word: raw } : { target: target.replace(/\\(.)/g, "$1"), word: raw },
          );
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
      // ls-files prints the names a pathspec matches and reads none of them.
      const pathspec = base === "git" && argv[1]?.value !== "ls-files" ? gitPathspecGlob(v) : null;
      if (pathspec) paths.push({ target: pathspec, glob: true });
      // `dd if=F`, `make -f x VAR=F`: the value of a key=value operand may be a path too.
      if (v.includes("=")) paths.push({ target: v.slice(v.indexOf("=") + 1) });
    }
    const colon = v.indexOf(":");
    if (colon !== -1 && colon < v.length - 1) paths.push({ target: v.slice(colon + 1) });
  }
  return paths.filter((p) => p.target !== "");
}

/**
 * `paths` with the files a `git …` argv reads from its object store by the object names it gives
 * (`:0:.env`, commands/git-revisions.ts), which are relative to the repository's top (the workspace or a
 * directory `-C` names), not to the working directory: `argv` as written, with its `-C` options.
 */
export function withObjectReads(paths: ArgumentPath[], argv: readonly ArgWord[]): ArgumentPath[] {
  const out = [...paths];
  for (const read of gitObjectReads(argv)) {
    const absolute = !read.glob || read.target.startsWith("/") || read.target.startsWith(ANY_TEXT);
    const path = absolute ? read : { ...read, target: `${WORKSPACE}/${read.target}` };
    if (!out.some((p) => p.target === path.target && !p.glob === !path.glob)) out.push(path);
  }
  return out;
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

/** Commands that change the shell's directory. */
export const DIRECTORY_CHANGERS = new Set(["cd", "pushd", "popd"]);
/**
 * Commands after which the same argv may run something else or read other input (directory, stdin,
 * aliases, the command hash, traps, shell options, exported variables): a script holding one has no
 * part whose identity stands alone.
 */
export const CONTEXT_CHANGERS = new Set([
  ...DIRECTORY_CHANGERS,
  "exec",
  "alias",
  "hash",
  "enable",
  "trap",
  "shopt",
  "set",
  "export",
  "declare",
  "typeset",
  "readonly",
  "unset",
  "umask",
  "ulimit",
]);
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
 * relative path is matched as the glob of that path anywhere: path-overlap.ts): a literal relative
 * path as the literal path it names in each of `dirs`, a glob as the glob below each of them.
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
  // A literal path in known directories is one of the exact paths it names there (`cd .git &&
  // cat config` reads /workspace/config or /workspace/.git/config): each judged as the literal path
  // it is (resolved in the sandbox, matched exactly), not as a glob that only may name it.
  if (!p.glob && dirs !== null)
    return dirs.map((d) => ({ ...p, identity: null, target: posix.resolve(d, p.target) }));
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

/**
 * The operands a feeding wrapper passes its payload (bash/listings.ts): the paths the listing
 * piped into xargs prints (not with `-a FILE`), or those find / fd find for `-exec` / `-x`; else
 * any path. Where the found path is spliced into a longer word (`xargs -I{} cat {}/../x`, `find
 * -exec cat {}/x \;`) the operand names another file: any path.
 */
export function fedOperands(
  label: string,
  argv: readonly ArgWord[],
  listing: Listing | null,
): ArgumentPath[] {
  if (label === "xargs") {
    const fromFile = argv.some((w) => w.value === null || /^-[^-]*a|^--a/.test(w.value));
    // Without -0, xargs splits its input at blanks and reads quotes (Found.split).
    const whole = argv.some((w) => /^-[^-]*0/.test(w.value ?? "") || w.value === "--null");
    return listing && !fromFile && !splices(argv, xargsReplace(argv))
      ? foundPaths(listing, "(xargs input)", !whole)
      : [ANY_UNKNOWN_PATH];
  }
  const found = listingOf(argv);
  return found && !splices(argv, "{}") ? foundPaths(found, "{}") : [ANY_UNKNOWN_PATH];
}

/** xargs' replace string (`-I R`, `-IR`, `-i`, `--replace[=R]`; GNU findutils), or null. */
function xargsReplace(argv: readonly ArgWord[]): string | null {
  for (const [k, w] of argv.entries()) {
    const v = w.value ?? "";
    if (v === "-I") return argv[k + 1]?.value ?? "";
    if (v.startsWith("-I")) return v.slice(2);
    if (v === "-i" || v === "--replace") return "{}";
    if (v.startsWith("-i") && !v.startsWith("--")) return v.slice(2);
    if (v.startsWith("--replace=")) return v.slice("--replace=".length);
  }
  return null;
}

/** Whether a word of `argv` holds `replace` inside a longer text (or the string is not known). */
function splices(argv: readonly ArgWord[], replace: string | null): boolean {
  if (replace === null) return false;
  if (replace === "") return true;
  return argv.some(
    (w) =>
      w.value === null ||
      (w.value !== replace && w.value.includes(replace) && !/^-I|^-i|^--replace/.test(w.value)),
  );
}

/**
 * `git -C DIR …` runs git as if started in DIR (git(1) `-C`, repeatable, each relative to the one
 * before, an absolute one starting afresh): the argv without its leading `-C DIR` options and the
 * directory they lead to, relative to where git starts, as a literal word: the caller judges the
 * rest as run in that directory, as for `env -C DIR` (bash/parts.ts inDirectory). null for any
 * other argv (not git, no leading `-C`, a DIR that is not literal or empty: judged as written).
 */
export function gitChdir(argv: readonly ArgWord[]): { argv: ArgWord[]; dir: ArgWord } | null {
  const name = argv[0]?.value ?? "";
  if (name.slice(name.lastIndexOf("/") + 1) !== "git" || argv[1]?.value !== "-C") return null;
  let dir = ".";
  let k = 1;
  for (; argv[k]?.value === "-C"; k += 2) {
    const to = argv[k + 1];
    if (!to || to.value === null || to.expands || to.value === "") return null;
    dir = posix.join(dir, to.value);
    if (to.value.startsWith("/")) dir = to.value;
  }
  return { argv: [argv[0] as ArgWord, ...argv.slice(k)], dir: { value: dir, expands: false, raw: dir } };
}
