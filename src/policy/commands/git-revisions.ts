/**
 * The workspace files a git command reads out of git's object store (issue 37, item 3). A secret
 * kept out of the sandbox's copy is still in `.git/objects` once committed or staged, and git
 * names its content without spelling a plain path: `HEAD^{tree}:.env`, `:0:.env`, `HEAD@{1}:.env`,
 * a blob id that `git ls-files -s` printed. Object names are read as gitrevisions(7) and git's
 * `get_oid_with_context` (object-name.c, git 2.39) read them:
 *
 * - `:/text` names a commit by its message (the rest of the word is the text, colons included);
 * - `:N:PATH` (N 0–3) and `:PATH` name an index entry; `REV:PATH` a path in the tree of REV, split
 *   at the first `:` outside `{…}` (so `HEAD@{1:2}:x` and `HEAD^{tree}:x` keep their suffixes).
 *   PATH is relative to the repository's top unless it starts with `./` or `../` (then to the
 *   working directory). It is judged as a read of that workspace path, so `.env` rules apply.
 * - a raw object id, full or abbreviated (4 to 64 hex digits), may be any blob or tree: it is tied
 *   to no path, and is read as "any path" (never auto-allowed under a policy that denies a path)
 *   unless a suffix proves a commit (`~N`, `^N`, `^{commit}`, `^!`, `^@`, `^-`). `ID:PATH` is a
 *   path inside whatever tree ID is, so any path too; so is a `^{blob}` peel.
 * - any other name (HEAD, a branch, `@{…}` and `^{…}` suffixes, ranges) is a commit, or with
 *   `^{tree}` its root tree.
 *
 * What a commit's patch shows (`git show HEAD`, `git log -p`, `git diff A B`) is not judged here:
 * path rules see the paths a command names, not every path a commit changed (docs/policies.md).
 * `git grep PATTERN REV`, `git grep --cached` and `git archive REV` read every file of a tree: the
 * pathspecs given, and below them, or any path when none is given. Pure.
 */

import { globEscape } from "../bash/words.js";
import { ANY_TEXT, type ArgWord } from "../command-pattern.js";
import { expandBraces } from "../path-overlap.js";

/** A file a git command reads from the object store: a literal path or a glob; `why` when it may be any. */
export interface GitObjectRead {
  /** Relative (to the working directory), absolute, or ANY_TEXT (any path). */
  target: string;
  glob?: boolean;
  /** Why the object is tied to no path (set with target ANY_TEXT). */
  why?: string;
}

/** What an object name names (gitrevisions(7)). */
export type ObjectName =
  | { kind: "commit" }
  /** A tree or blob at a path of the repository (`REV:PATH`, `:N:PATH`, `:PATH`); "" is the top. */
  | { kind: "path"; path: string }
  /** A commit's root tree (`REV^{tree}`, `REV:`). */
  | { kind: "tree" }
  /** An object tied to no path (a raw id, `ID:PATH`, a `^{blob}` peel). */
  | { kind: "object" };

/** A raw object id as git abbreviates it: 4 (MINIMUM_ABBREV) to 64 (SHA-256) hex digits. */
const OBJECT_ID = /^[0-9a-fA-F]{4,64}$/;
/** Suffixes that only a commit (or a tag peeled to one) accepts. */
const COMMIT_SUFFIX = /^(~\d*|\^(?!\{)\d*|\^\{commit\}|\^!|\^@|\^-\d*)/;

/** Index of the first `:` of `name` outside `{…}`, as get_oid_with_context scans, or -1. */
function treeColon(name: string): number {
  let depth = 0;
  for (let i = 0; i < name.length; i++) {
    const ch = name[i];
    if (ch === "{") depth++;
    else if (depth > 0 && ch === "}") depth--;
    else if (depth === 0 && ch === ":") return i;
  }
  return -1;
}

/** What a revision without a `:PATH` part names. */
function revisionKind(rev: string): ObjectName {
  // `A..B` and `A...B`: each end is a commit-ish revision.
  const ends = rev.split(/\.\.\.?/).filter((e) => e !== "");
  if (ends.length > 1) {
    const kinds = ends.map(revisionKind);
    return kinds.find((k) => k.kind === "object") ?? { kind: "commit" };
  }
  const bare = rev.replace(/^\^/, "");
  const base = /^[^~^@]*/.exec(bare)?.[0] ?? "";
  const suffix = bare.slice(base.length);
  if (/\^\{blob\}/.test(suffix)) return { kind: "object" };
  if (OBJECT_ID.test(base) && !COMMIT_SUFFIX.test(suffix)) {
    return /^\^\{tree\}/.test(suffix) ? { kind: "tree" } : { kind: "object" };
  }
  return /\^\{tree\}$/.test(suffix) ? { kind: "tree" } : { kind: "commit" };
}

/** Reads one object name (see module doc). Pure. */
export function parseObjectName(name: string): ObjectName {
  if (name.startsWith(":/")) return { kind: "commit" };
  const stage = /^:[0-3]:/.exec(name);
  if (stage) return { kind: "path", path: name.slice(3) };
  if (name.startsWith(":")) return { kind: "path", path: name.slice(1) };
  const colon = treeColon(name);
  if (colon === -1) return revisionKind(name);
  const rev = revisionKind(name.slice(0, colon));
  return rev.kind === "object" ? rev : { kind: "path", path: name.slice(colon + 1) };
}

/**
 * Subcommands that read objects by name. `object`: a name tied to no path may be any file's
 * content (show, cat-file, diff of two blobs, a checkout from a tree); `commit`: git takes only a
 * commit there, or lists names (log, blame, ls-tree), so only `REV:PATH` counts; `tree`: every
 * file of the named tree is read (grep, archive).
 */
type Reader = "object" | "commit" | "tree";
const READERS: Record<string, Reader> = {
  show: "object",
  "cat-file": "object",
  diff: "object",
  "diff-tree": "object",
  restore: "object",
  checkout: "object",
  log: "commit",
  whatchanged: "commit",
  shortlog: "commit",
  blame: "commit",
  annotate: "commit",
  "ls-tree": "commit",
  switch: "commit",
  grep: "tree",
  archive: "tree",
};

/**
 * git grep's options that take the next word as their value (git-grep(1)). Any other option word
 * is taken as a flag: a value mistaken for an object name only asks more, never less.
 */
const GREP_VALUE = new Set([
  "-e",
  "-f",
  "-A",
  "-B",
  "-C",
  "-m",
  "--after-context",
  "--before-context",
  "--context",
  "--max-depth",
  "--threads",
  "--max-count",
]);

/** True when `word` is `--name` or an abbreviation of it, as git's parse-options accepts. */
function isLong(word: string, name: string): boolean {
  const given = word.split("=")[0] as string;
  return given.length > 3 && `--${name}`.startsWith(given);
}

/** The global options of `git` itself that take the next word (git(1)). */
const GLOBAL_VALUE = new Set(["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env"]);

const NO_PATH = (name: string) =>
  `git object ${name} is not tied to a path: it may be any file's content (name a commit as ${name}^{commit}, a file as REV:PATH)`;
const WHOLE_TREE = (sub: string) =>
  `git ${sub} reads every file of a tree from git's object store, a committed secret too (name the paths after --)`;

/**
 * The reads of one object name (a literal, or a glob when `glob`); `below`: the files under a
 * tree it names are read too. `dirs`: directories `git -C` names, where the repository's top may be.
 */
function nameReads(
  name: string,
  glob: boolean,
  reader: Reader,
  below: boolean,
  dirs: string[],
): GitObjectRead[] {
  const object = parseObjectName(name);
  if (object.kind === "object")
    return reader === "commit" ? [] : [{ target: ANY_TEXT, glob: true, why: NO_PATH(name) }];
  if (object.kind !== "path") return [];
  const path = object.path;
  // `./x` and `../x` are relative to the working directory; any other path to the repository's
  // top: the workspace, or a directory `-C` names.
  const relative = /^\.\.?(\/|$)/.test(path);
  const targets = relative ? [path] : [path === "" ? "." : path, ...dirs.map((d) => `${d}/${path}`)];
  const out: GitObjectRead[] = targets.map((target) => (glob ? { target, glob } : { target }));
  if (below)
    for (const t of targets) out.push({ target: `${glob ? t : globEscape(t)}/${ANY_TEXT}`, glob: true });
  return out;
}

/** The object names one word may be: itself when literal, else each brace alternative of its glob. */
function wordNames(word: ArgWord): { name: string; glob: boolean }[] {
  if (word.value !== null && !word.expands) return [{ name: word.value, glob: false }];
  return (expandBraces(word.glob ?? ANY_TEXT) ?? [ANY_TEXT]).map((g) => {
    const wild = /[*?[\u0001]/.test(g.replace(/\\./g, ""));
    return wild ? { name: g, glob: true } : { name: g.replace(/\\(.)/g, "$1"), glob: false };
  });
}

/** Skips git's own options; the subcommand's index and the directories `-C` names. */
function subcommand(argv: readonly ArgWord[]): { at: number; dirs: string[] } {
  const dirs: string[] = [];
  let i = 1;
  for (; i < argv.length; i++) {
    const v = argv[i]?.value;
    if (v === null || v === undefined || !v.startsWith("-")) break;
    if (GLOBAL_VALUE.has(v)) {
      const value = argv[++i]?.value;
      if (v === "-C" && value) dirs.push(value);
    } else if (v.startsWith("-C")) dirs.push(v.slice(2));
  }
  return { at: i, dirs };
}

/**
 * The files `argv` (a `git …` command) reads from git's object store through the object names it
 * gives (see module doc); `[]` for a subcommand that reads none, or a command that is not git.
 * Before `--` every operand may be a revision (git tries each as one first, gitcli(7)); after it,
 * only paths. Relative targets are relative to the working directory. Pure; linear in argv.
 */
export function gitObjectReads(argv: readonly ArgWord[]): GitObjectRead[] {
  const name = argv[0]?.value ?? "";
  if (name.slice(name.lastIndexOf("/") + 1) !== "git") return [];
  const { at, dirs } = subcommand(argv);
  const sub = argv[at]?.value ?? "";
  const reader = READERS[sub];
  if (!reader) return [];
  const reads: GitObjectRead[] = [];
  const pathspecs: ArgWord[] = [];
  let wholeTree = false;
  let pattern = sub === "grep";
  let afterDashes = false;
  for (let k = at + 1; k < argv.length; k++) {
    const word = argv[k] as ArgWord;
    const v = word.value;
    if (afterDashes) pathspecs.push(word);
    else if (v === "--") afterDashes = true;
    else if (v !== null && !word.expands && v.startsWith("-") && v.length > 1) {
      const option = v.split("=")[0] as string;
      if (sub === "grep") {
        if (isLong(v, "cached")) wholeTree = true;
        if (option === "-e" || option === "-f" || isLong(v, "regexp") || isLong(v, "file")) pattern = false;
        if (GREP_VALUE.has(option) && !v.includes("=")) k++;
      }
      if (sub === "cat-file" && (isLong(v, "batch") || isLong(v, "batch-command")))
        reads.push({
          target: ANY_TEXT,
          glob: true,
          why: "git cat-file --batch reads the objects its input names",
        });
      if (sub === "restore" && (option === "-s" || isLong(v, "source"))) {
        // restore --source=TREE writes the pathspecs' files from TREE into the work tree.
        const value = v.includes("=") ? { value: v.slice(v.indexOf("=") + 1), expands: false } : argv[++k];
        for (const n of value ? wordNames(value) : [])
          reads.push(...nameReads(n.name, n.glob, "object", true, dirs));
      }
    } else if (pattern) pattern = false;
    else
      for (const n of wordNames(word)) {
        const kind = parseObjectName(n.name).kind;
        if (reader === "tree" && (kind === "commit" || kind === "tree")) wholeTree = true;
        reads.push(...nameReads(n.name, n.glob, reader, reader === "tree" || sub === "checkout", dirs));
      }
  }
  if (wholeTree) {
    if (pathspecs.length === 0) reads.push({ target: ANY_TEXT, glob: true, why: WHOLE_TREE(sub) });
    for (const p of pathspecs)
      for (const n of wordNames(p))
        reads.push({ target: `${n.glob ? n.name : globEscape(n.name)}/${ANY_TEXT}`, glob: true });
  }
  return reads;
}
