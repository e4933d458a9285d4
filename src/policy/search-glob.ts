/**
 * The files the grep tool's `glob` names, as word globs for path rules (path-overlap.ts). The tool
 * runs ripgrep with `--glob`, which overrides .gitignore (as in Pi), so a glob reaches an ignored
 * secret that a search of the directory skips: `glob: "*"` searches a `.env` that .gitignore lists.
 * The directories a search walks are judged on the search path (docs/security.md, known limits:
 * recursive reads); the glob is judged as the names it gives below that path, read the way ripgrep
 * reads gitignore-syntax globs (the `ignore` crate's overrides): a glob without a `/` matches a
 * name at any depth and `**` any number of directories, both the walk, so the names are judged
 * as if directly below the search path; `*`, `?` and a class match a leading dot too, which bash's
 * rule (path-overlap.ts `nodot`) does not; a name starting with a dot may be a hidden directory
 * the glob opens (`{.git,config}` searches `.git/config`), so what is below it is named too. `.env`,
 * `*`, `**`, `*env` and `.e?v` meet a rule on `.env` at any depth, `{.git,config}` one on
 * `.git/config`; `*.ts` (below `src` or at any depth too) meets none of the shipped rules.
 */

import { globEscape } from "./bash/words.js";
import { ANY_TEXT } from "./command-pattern.js";
import { expandBraces } from "./path-overlap.js";

/** More combinations than this and the glob is taken to name any path below the search path. */
const MAX_WORDS = 64;

/**
 * The bash-style patterns one ripgrep glob component stands for (null: the component is dropped).
 * `**` is the walk, except as the last component, where it names any file. A leading wildcard
 * also gets the dotfile it matches in ripgrep (`*env`: `.env`; `*`: `.*`), unless what follows it
 * starts with a dot: `*.ts` is not taken to name `.env.ts` (docs/security.md, known limits).
 */
function componentPatterns(component: string, last: boolean): (string | null)[] {
  if (component === "**") return last ? ["*", ".*"] : [null];
  const lead = /^(\*+|\?|\[[^\]]*\])/.exec(component)?.[1];
  if (lead === undefined) return [component];
  const rest = component.slice(lead.length);
  if (rest.startsWith(".")) return [component];
  return [component, `.${lead.startsWith("*") ? "*" : ""}${rest}`];
}

/**
 * The word globs (absolute, braces expanded) of the names `glob` gives below the search path `path`
 * (canonical, absolute; see the module doc). None for a missing or empty glob and for an exclusion
 * (`!…`), which names nothing; any path below `path` past MAX_WORDS combinations.
 */
export function searchGlobs(path: string, glob: unknown): string[] {
  if (typeof glob !== "string" || glob === "" || glob.startsWith("!")) return [];
  const base = globEscape(path.replace(/\/+$/, ""));
  const words: string[] = [];
  for (const alternative of expandBraces(glob) ?? ["**"]) {
    const trimmed = alternative.replace(/^\/+|\/+$/g, "");
    let partial: string[] = [base];
    const components = trimmed.split("/").filter((c) => c !== "");
    for (const [k, component] of components.entries()) {
      const next: string[] = [];
      for (const head of partial)
        for (const pattern of componentPatterns(component, k === components.length - 1))
          next.push(pattern === null ? head : `${head}/${pattern}`);
      partial = next;
      if (partial.length > MAX_WORDS) return [`${base}/${ANY_TEXT}`];
    }
    // A name starting with a dot may be a hidden directory the glob lets ripgrep enter (`.git` in
    // `{.git,config}`): what is below it, at any depth, is named too.
    for (const word of partial) words.push(word, ...(/\/\.[^/]*$/.test(word) ? [`${word}/${ANY_TEXT}`] : []));
    if (words.length > MAX_WORDS) return [`${base}/${ANY_TEXT}`];
  }
  return words;
}
