/**
 * Confinement of find's glob pattern (public-faults case 4; gemini-cli#28666, #29075): a pattern
 * that names a parent directory or an absolute path, including inside brace alternatives such as
 * `{.,..}` or escaped as `\.\.` or `[.][.]`, is refused before fd runs. This is the first line only:
 * the tool also filters every returned path after expansion.
 */
import { InvalidArgumentError } from "../errors.js";

/** True when some alternative of `pattern` is absolute or has a `..` component. */
export function patternClimbsOut(pattern: string): boolean {
  // Undo the escapes and one-character classes that spell a dot or a slash literally.
  const plain = pattern
    .replace(/\[([./])\]/g, "$1")
    .replace(/\\(.)/g, "$1")
    .replace(/\/+/g, "/");
  if (/(^|[{,])\s*(\/|~(?=$|[/},]))/.test(plain)) return true;
  return /(^|[/{,])\.\.(?=$|[/},])/.test(plain);
}

/** Throws InvalidArgumentError when `pattern` climbs out of the search directory (see patternClimbsOut). */
export function assertPatternConfined(pattern: string): void {
  if (patternClimbsOut(pattern)) {
    throw new InvalidArgumentError(
      `Pattern '${pattern}' reaches outside the search directory (absolute path or '..'). ` +
        "Give a pattern relative to the search directory, and set path to a directory inside the workspace.",
    );
  }
}

/**
 * fd's glob for `pattern`: a pattern containing "/" is matched against the full path (`--full-path`),
 * so it is prefixed with `**` + "/" to match below any directory, as Pi does.
 */
export function fdGlob(pattern: string): { glob: string; fullPath: boolean } {
  if (!pattern.includes("/")) return { glob: pattern, fullPath: false };
  const glob = pattern.startsWith("**/") || pattern === "**" ? pattern : `**/${pattern}`;
  return { glob, fullPath: true };
}
