/**
 * Command patterns for bash rules: argv words with wildcards, matched against one simple command
 * after quoting is resolved and wrappers are unwrapped. Never a string-prefix match.
 *
 * - A pattern is a prefix: `git status` matches `git status --short`.
 * - A word `*` on its own matches any run of words (zero or more): `git diff *` = `git diff`,
 *   `find * -delete` matches a find with `-delete` anywhere.
 * - Any other word is a glob on one argv word (`*` any characters, `?` one): `npm run test*`.
 * - The command name matches by basename (`/bin/rm` is `rm`). For allow rules a name with a
 *   directory must be in a system bin directory (`./git status` is not `git status`).
 *
 * Words of the command that are not literal (`$X`, `$(...)`) or that the shell may expand
 * (unquoted globs, braces) match only `*` in allow rules, and match anything in deny and ask rules,
 * so uncertainty always errs towards the stricter decision.
 */

/** One argv word: its literal value (null when it is not literal) and whether the shell may expand it. */
export interface ArgWord {
  value: string | null;
  expands: boolean;
  /** Source text of the word, for display. */
  raw?: string;
  /**
   * For a word the shell expands or that is not literal: every string it may become, as a glob
   * (bash/words.ts globOf): quoted text escaped, unquoted `* ? [ { ~` kept, and each parameter
   * expansion or substitution as ANY_TEXT (any text, `/` included).
   */
  glob?: string;
  /**
   * For a `$(…)` word whose command is a listing (bash/listings.ts): the globs of the paths it
   * prints, judged as found paths (bash/arguments.ts foundPaths) instead of as any text.
   */
  found?: { target: string; found?: Found }[];
}

/**
 * Where a path a listing printed lies (bash/listings.ts): directly in a directory it searched
 * (`here`) or below one (`below`); `hidden`: the listing may print dot files and walk into dot
 * directories, and its name filters match a leading dot with `*`, `?` or `[…]` (fnmatch(3)
 * without FNM_PERIOD, as find's `-name`); else (fd, rg without `--hidden`) no name it prints, and
 * no directory it walks, begins with a dot.
 */
export interface Found {
  depth: "here" | "below";
  hidden: boolean;
  /**
   * The names reach the command split at blanks (xargs without `-0`, which also reads quotes and
   * backslashes; an unquoted `$(…)`, which bash also globs): a piece of a name may be any path.
   * Judged as any path lexically; live, only names without such characters are judged (live-paths.ts).
   */
  split?: boolean;
}

/** In ArgWord.glob: any text at all, slashes included (the value of `$X` or `$(…)`). */
export const ANY_TEXT = "\u0001";

/** allow: uncertain words do not match; restrict (deny / ask): uncertain words match. */
export type MatchMode = "allow" | "restrict";

const SYSTEM_BIN_DIRS = new Set([
  "/bin",
  "/usr/bin",
  "/usr/local/bin",
  "/sbin",
  "/usr/sbin",
  "/usr/local/sbin",
]);

const wordGlobCache = new Map<string, RegExp>();

function wordGlob(pattern: string): RegExp {
  let re = wordGlobCache.get(pattern);
  if (!re) {
    const source = [...pattern]
      .map((ch) => (ch === "*" ? ".*" : ch === "?" ? "." : ch.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&")))
      .join("");
    re = new RegExp(`^${source}$`, "s");
    wordGlobCache.set(pattern, re);
  }
  return re;
}

/** Splits a pattern string into its words (whitespace separated). */
export function patternWords(pattern: string): string[] {
  return pattern
    .trim()
    .split(/\s+/)
    .filter((w) => w !== "");
}

function basename(name: string): string {
  const i = name.lastIndexOf("/");
  return i === -1 ? name : name.slice(i + 1);
}

function matchName(pattern: string, word: ArgWord, mode: MatchMode): boolean {
  if (word.value === null || word.expands) return mode === "restrict";
  const name = word.value;
  if (mode === "allow" && name.includes("/")) {
    const dir = name.slice(0, name.lastIndexOf("/")) || "/";
    if (!SYSTEM_BIN_DIRS.has(dir)) return false;
  }
  return wordGlob(basename(pattern)).test(basename(name));
}

function matchWord(pattern: string, word: ArgWord, mode: MatchMode): boolean {
  if (word.value === null || word.expands) {
    if (mode === "restrict") return true;
    if (word.value === null) return /^\*+$/.test(pattern);
  }
  return wordGlob(pattern).test(word.value ?? "");
}

/**
 * True when `argv` (the command name first) matches the pattern words `pattern` under `mode`.
 * Pure; O(pattern × argv) with memoised backtracking for `*` words.
 */
export function matchCommand(pattern: readonly string[], argv: readonly ArgWord[], mode: MatchMode): boolean {
  const first = pattern[0];
  const name = argv[0];
  if (first === undefined || name === undefined) return false;
  if (first !== "*" && !matchName(first, name, mode)) return false;
  const memo = new Map<number, boolean>();
  const go = (p: number, a: number): boolean => {
    if (p === pattern.length) return true;
    const key = p * (argv.length + 1) + a;
    const hit = memo.get(key);
    if (hit !== undefined) return hit;
    const word = pattern[p] as string;
    let ok: boolean;
    if (word === "*") ok = go(p + 1, a) || (a < argv.length && go(p, a + 1));
    else ok = a < argv.length && matchWord(word, argv[a] as ArgWord, mode) && go(p + 1, a + 1);
    memo.set(key, ok);
    return ok;
  };
  return first === "*" ? go(0, 0) : go(1, 1);
}
