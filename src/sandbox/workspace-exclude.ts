/**
 * What copy mode leaves out of the sandbox: gitignore-syntax patterns (the `ignore` package, which
 * follows git's rules) relative to the workspace root, and an optional predicate (e.g. "the session's
 * policy denies reading this"). A directory is asked about as `dir/`; what is under an excluded
 * directory is excluded with it.
 */
import ignore from "ignore";

/** True when `relPath` (POSIX, relative to the workspace root; `dir/` for a directory) is left out. */
export type ExcludePredicate = (relPath: string) => boolean;

/** The predicate for `patterns` and `extra`; undefined when nothing is excluded. */
export function excludeMatcher(
  patterns: string[] = [],
  extra?: ExcludePredicate,
): ExcludePredicate | undefined {
  if (patterns.length === 0 && !extra) return undefined;
  const rules = ignore().add(patterns);
  return (relPath) => rules.ignores(relPath) || (extra?.(relPath) ?? false);
}
