/**
 * What a listing command prints, as paths (issue 37 item 11): `find D -name N`, `fd`, `rg --files`,
 * `rg -l`, `grep -rl` and `git ls-files` print paths found below their directories whose names
 * match their name filters; line filters after them (`grep -v`, `head`, `sort`…) print a subset
 * of those lines. The operands such a listing feeds to a command (`… | xargs wc -l`, `$(git
 * ls-files '*.ts')`, `find -exec wc -l {} +`) are judged as found paths (bash/arguments.ts
 * foundPaths): as paths at any depth below the directories searched, matching the name filter.
 * Anything else (`printf … | xargs cat`, `xargs -a list`, a `-printf` format) prints unknown text.
 */
import type { Node } from "web-tree-sitter";
import type { ArgWord } from "../command-pattern.js";
import { wordOf } from "./words.js";

/** What a listing prints: paths below `dirs` whose last component matches one of `names`. */
export interface Listing {
  /** Directories searched, as written (relative ones to the script's directory). */
  dirs: string[];
  /** Name patterns in glob syntax, matched by the `hidden` rule; null: any name. */
  names: string[] | null;
  /**
   * True when the listing may print dot files and walks into dot directories, its name filters
   * matching a leading dot with `*` (fnmatch(3) without FNM_PERIOD: find `-name`, grep
   * `--include`, rg `-g`); false when it prints no path with a component beginning with a dot
   * (fd, rg without `--hidden` / `-u` / `-g`).
   */
  hidden: boolean;
}

/** A name filter: glob syntax; `-iname` turns each letter into a class of both cases. */
function namePattern(value: string, caseless: boolean): string {
  return caseless ? value.replace(/[A-Za-z]/g, (c) => `[${c.toLowerCase()}${c.toUpperCase()}]`) : value;
}

const FIND_LISTED = new Set(["-type", "-xtype", "-maxdepth", "-mindepth", "-size", "-mtime", "-mmin"]);
const FIND_VALUED_FILTERS = new Set([
  ...FIND_LISTED,
  "-path",
  "-ipath",
  "-wholename",
  "-iwholename",
  "-newer",
  "-user",
  "-group",
  "-perm",
  "-regextype",
]);
const FIND_FLAGS = new Set([
  "-empty",
  "-readable",
  "-executable",
  "-depth",
  "-xdev",
  "-mount",
  "-prune",
  "-true",
]);

/**
 * find's listing: the operands before the expression are the directories; the expression may join
 * branches with `-o` (each prints what its own `-name` filters allow), negate a filter (`! -path
 * x`: ignored, the listing only grows), and print with `-print`, `-print0` or `-exec … {}`.
 * Parentheses, `-printf`, `-ls` and unknown primaries are not read: null.
 */
function findListing(words: string[]): Listing | null {
  let k = 0;
  while (k < words.length && /^-[HLP]$/.test(words[k] as string)) k++;
  const dirs: string[] = [];
  for (; k < words.length && !/^[-(!]/.test(words[k] as string); k++) dirs.push(words[k] as string);
  type Branch = { names: string[]; prints: boolean };
  const branches: Branch[] = [{ names: [], prints: false }];
  let negated = false;
  for (; k < words.length; k++) {
    const w = words[k] as string;
    const branch = branches.at(-1) as Branch;
    if (w === "-o" || w === "-or" || w === ",") branches.push({ names: [], prints: false });
    else if (w === "!" || w === "-not") negated = true;
    else if (w === "-name" || w === "-iname") {
      const value = words[++k];
      if (value === undefined) return null;
      if (!negated) branch.names.push(namePattern(value, w === "-iname"));
      negated = false;
    } else if (FIND_VALUED_FILTERS.has(w)) {
      k++;
      negated = false;
    } else if (w === "-print" || w === "-print0") branch.prints = true;
    else if (w === "-exec" || w === "-ok") {
      while (k + 1 < words.length && words[k + 1] !== ";" && words[k + 1] !== "+") k++;
      k++;
      branch.prints = true;
    } else if (FIND_FLAGS.has(w) || w === "-a" || w === "-and") negated = false;
    else return null;
  }
  // With an action anywhere, only the branches holding one print (`-path x -prune -o -print`).
  const printing = branches.some((b) => b.prints) ? branches.filter((b) => b.prints) : branches;
  const searched = dirs.length ? dirs : ["."];
  if (printing.some((b) => b.names.length === 0)) return { dirs: searched, names: null, hidden: true };
  return { dirs: searched, names: printing.flatMap((b) => b.names), hidden: true };
}

const LS_FILES_FLAGS = new Set([
  "-z",
  "-c",
  "--cached",
  "-m",
  "--modified",
  "-o",
  "--others",
  "-d",
  "--deleted",
  "--exclude-standard",
  "--full-name",
  "--recurse-submodules",
]);

/**
 * `git ls-files [flags] [--] [pathspec…]`: tracked (or `-o` untracked) paths, relative to the
 * workspace. A pathspec's last component is its name filter (`'*.ts'`, `'test/unit/*.test.ts'`);
 * git's `*` also spans `/`, so a `*` inside that component keeps only what follows it.
 */
function lsFilesListing(words: string[]): Listing | null {
  const specs: string[] = [];
  let options = true;
  for (const w of words) {
    if (options && w === "--") options = false;
    else if (options && w.startsWith("-")) {
      if (!LS_FILES_FLAGS.has(w)) return null;
    } else specs.push(w);
  }
  if (specs.length === 0) return { dirs: ["."], names: null, hidden: true };
  const dirs: string[] = [];
  const names: string[] = [];
  let anyName = false;
  for (const spec of specs) {
    if (spec.startsWith(":")) return null;
    const wild = spec.search(/[*?[]/);
    if (wild === -1) {
      dirs.push(spec);
      anyName = true;
      continue;
    }
    const slash = spec.lastIndexOf("/", wild);
    dirs.push(slash === -1 ? "." : spec.slice(0, slash));
    const last = spec.slice(spec.lastIndexOf("/") + 1);
    const star = last.indexOf("*");
    names.push(star > 0 ? `*${last.slice(star + 1)}` : last);
  }
  return { dirs, names: anyName ? null : names, hidden: true };
}

/**
 * fd and `rg --files` / `rg -l`: paths below the operand directories, dot files and dot
 * directories left out unless `-H` / `--hidden` / `-u`; fd's `-e EXT` and `-g`, rg's `-g GLOB`
 * filter names. rg lists a dot file (and walks a dot directory) its `-g` glob names even without
 * `--hidden` (ripgrep 13: `rg --files -g '*.local'` prints `.env.local`).
 */
function searchListing(tool: "fd" | "rg", words: string[]): Listing | null {
  const valued = tool === "fd" ? /^(-[tdE]|--type|--max-depth|--exclude)$/ : /^(-[tTe]|--type)$/;
  const operands: string[] = [];
  const names: string[] = [];
  let hidden = false;
  let glob = false;
  let lists = tool === "fd";
  for (let k = 0; k < words.length; k++) {
    const w = words[k] as string;
    if (w === "-H" || w === "--hidden" || /^-u+$/.test(w)) hidden = true;
    else if (tool === "fd" && (w === "-e" || w === "--extension")) names.push(`*.${words[++k] ?? ""}`);
    else if (tool === "fd" && (w === "-g" || w === "--glob")) glob = true;
    else if (tool === "rg" && (w === "-g" || w === "--glob")) {
      const g = words[++k] ?? "!";
      if (!g.startsWith("!")) names.push(g.slice(g.lastIndexOf("/") + 1));
    } else if (tool === "rg" && (w === "--files" || w === "-l" || w === "--files-with-matches")) lists = true;
    else if (valued.test(w)) k++;
    else if (/^-[iswFSI0]+$|^--(ignore-case|fixed-strings|null|print0|no-ignore)$/.test(w)) continue;
    else if (w.startsWith("-")) return null;
    else operands.push(w);
  }
  if (!lists) return null;
  // fd PATTERN [DIR…]; rg -l PATTERN [DIR…]; rg --files [DIR…].
  const pattern = tool === "fd" || !words.includes("--files") ? operands.shift() : undefined;
  if (glob && pattern !== undefined) names.push(pattern);
  const dirs = operands.length ? operands : ["."];
  hidden ||= tool === "rg" && names.length > 0;
  return { dirs, names: names.length ? names : null, hidden };
}

/**
 * `grep -rl PATTERN DIR…` (`-R`, `--include=GLOB`): files below DIR holding a match, dot files and
 * dot directories too; `--include` matches names with fnmatch(3) without FNM_PERIOD (GNU grep 3.8).
 */
function grepListing(words: string[]): Listing | null {
  const operands: string[] = [];
  const names: string[] = [];
  let recursive = false;
  let lists = false;
  for (const w of words) {
    if (w.startsWith("--include=")) names.push(w.slice(10));
    else if (/^-[rRlLisvwEFx]+$/.test(w)) {
      recursive ||= /[rR]/.test(w);
      lists ||= w.includes("l");
    } else if (w.startsWith("-")) return null;
    else operands.push(w);
  }
  operands.shift();
  if (!recursive || !lists) return null;
  return { dirs: operands.length ? operands : ["."], names: names.length ? names : null, hidden: true };
}

/**
 * `ls [-1trSd] [OPERAND…]`: the operands a glob matches, and for a directory its entries' names,
 * bare, which the next command takes relative to the working directory: any path below it, dot
 * names only when an operand spells a dot component (ls shows none without `-a`, and bash's globs
 * match none). Operands must stay below the working directory (no `/`, `~` or `..`) and be free
 * of parameter expansions; any other option (`-l`, `-F`, `-a`, `--color`…) changes what it prints:
 * null.
 */
function lsListing(argv: readonly ArgWord[]): Listing | null {
  let options = true;
  let hidden = false;
  for (const word of argv.slice(1)) {
    const v = word.value;
    if (v === null) return null;
    if (options && v === "--") options = false;
    else if (options && v.startsWith("-") && !word.expands) {
      if (!/^-[1trSd]+$/.test(v)) return null;
    } else {
      if (/^[/~-]/.test(v) || v.split("/").includes("..")) return null;
      hidden ||= v.split("/").some((c) => c.startsWith("."));
    }
  }
  return { dirs: ["."], names: null, hidden };
}

/** The listing `argv` prints, or null when its output is not known to be found paths. */
export function listingOf(argv: readonly ArgWord[]): Listing | null {
  if (argv[0]?.value === "ls") return lsListing(argv);
  // find's `{}` (the found path, in -exec) is a literal word to find; bash expands no other braces there.
  if (argv.some((w) => w.value === null || (w.expands && w.value !== "{}"))) return null;
  const words = argv.map((w) => w.value as string);
  const name = words[0]?.slice(words[0].lastIndexOf("/") + 1);
  const rest = words.slice(1);
  if (name === "find") return findListing(rest);
  if (name === "git" && rest[0] === "ls-files") return lsFilesListing(rest.slice(1));
  if (name === "fd" || name === "fdfind") return searchListing("fd", rest);
  if (name === "rg") return searchListing("rg", rest);
  if (name === "grep") return grepListing(rest);
  return null;
}

/** Filters that print a subset of their input lines (`grep -v test`, `head -5`, `sort -u`). */
function filtersLines(argv: readonly ArgWord[]): boolean {
  if (argv.some((w) => w.value === null || w.expands)) return false;
  const [name, ...rest] = argv.map((w) => w.value as string);
  const options = rest.filter((w) => w.startsWith("-"));
  switch (name) {
    case "grep":
      return options.every((o) => /^-[viEFwxe]+$/.test(o));
    case "head":
    case "tail":
      return rest.every((w) => /^-(n|\d+)$|^\d+$/.test(w));
    case "sort":
      return options.every((o) => /^-[urnVf]+$/.test(o));
    case "uniq":
      return rest.length === 0;
    default:
      return false;
  }
}

/** The argv of a simple command node (null when it sets variables or is not a command). */
function nodeArgv(node: Node): ArgWord[] | null {
  const command = node.type === "redirected_statement" ? node.namedChildren[0] : node;
  if (command?.type !== "command") return null;
  const argv: ArgWord[] = [];
  for (const child of command.namedChildren) {
    if (!child || child.type === "file_redirect") continue;
    if (child.type === "variable_assignment" || child.type === "herestring_redirect") return null;
    const word = child.type === "command_name" ? child.namedChildren[0] : child;
    if (word) argv.push(wordOf(word));
  }
  return argv;
}

/**
 * The listing a pipeline's elements up to `last` (a listing, then line filters) print, or null.
 * `elements` are the pipeline's named children in order.
 */
export function pipelineListing(elements: readonly Node[]): Listing | null {
  const [first, ...filters] = elements.map(nodeArgv);
  if (!first) return null;
  const listing = listingOf(first);
  return listing && filters.every((f) => f !== null && filtersLines(f)) ? listing : null;
}

/** The listing a `$(…)` substitution node prints (a listing or a pipeline of one), or null. */
export function substitutionListing(node: Node): Listing | null {
  const inner = node.type === "string" && node.namedChildCount === 1 ? node.namedChildren[0] : node;
  if (inner?.type !== "command_substitution" || inner.namedChildCount !== 1) return null;
  const body = inner.namedChildren[0];
  if (!body) return null;
  if (body.type === "pipeline") return pipelineListing(body.namedChildren.filter((c) => c !== null));
  return pipelineListing([body]);
}
