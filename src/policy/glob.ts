/**
 * Path globs for policy rules, matched on canonical absolute paths by whole path components
 * (CVE-2025-53110: `/workspace-evil` must not pass for `/workspace`).
 *
 * Syntax: `*` any run of characters within one component, `?` one character, `[abc]` a class,
 * `{a,b}` alternatives, `**` as a whole component any number (zero or more) of components. Dotfiles
 * are matched like any other name. A pattern not starting with `/` matches at any depth
 * (`*.pem` = `/**\/*.pem`, like .gitignore). `/workspace/**` matches /workspace and everything below.
 */

const cache = new Map<string, RegExp>();

function escapeRegex(ch: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(ch) ? `\\${ch}` : ch;
}

/** Regex source for one path component (no `/` inside). */
function componentSource(segment: string): string {
  let out = "";
  let braceDepth = 0;
  for (let i = 0; i < segment.length; i++) {
    const ch = segment[i] as string;
    if (ch === "*") out += "[^/]*";
    else if (ch === "?") out += "[^/]";
    else if (ch === "[") {
      const end = segment.indexOf("]", i + 2);
      if (end === -1) out += "\\[";
      else {
        let body = segment.slice(i + 1, end).replace(/\\/g, "\\\\");
        if (body.startsWith("!")) body = `^${body.slice(1)}`;
        out += `[${body}]`;
        i = end;
      }
    } else if (ch === "{") {
      braceDepth++;
      out += "(?:";
    } else if (ch === "}" && braceDepth > 0) {
      braceDepth--;
      out += ")";
    } else if (ch === "," && braceDepth > 0) out += "|";
    else out += escapeRegex(ch);
  }
  return out + ")".repeat(braceDepth);
}

/**
 * Why `pattern` is not a well-formed glob (see module doc), or null: a `[` or `{` never closed in
 * its path component (`{a/b,c}` included: alternatives cannot hold a `/`), a `}` that closes
 * nothing, `**` inside a component (it means any depth only as a whole one: `/src/**\/*.ts`), or a
 * class the regex engine refuses (`[z-a]`). compileGlob itself reads such text leniently (a lone
 * `[` as a character), so policy files are checked with this first.
 */
export function globProblem(pattern: string): string | null {
  for (const segment of pattern.split("/")) {
    if (segment !== "**" && segment.includes("**"))
      return `has '**' inside the path component '${segment}': '**' matches any depth only as a whole component, e.g. /src/**/*.ts`;
    let depth = 0;
    for (let i = 0; i < segment.length; i++) {
      const ch = segment[i];
      if (ch === "[") {
        const end = segment.indexOf("]", i + 2);
        if (end === -1)
          return `has a '[' that no ']' closes in '${segment}' (a class is [abc] within one path component)`;
        i = end;
      } else if (ch === "{") depth++;
      else if (ch === "}" && --depth < 0) return `has a '}' that closes no '{' in '${segment}'`;
    }
    if (depth > 0)
      return `has a '{' that no '}' closes in '${segment}' (alternatives are {a,b} within one path component)`;
  }
  try {
    compileGlob(pattern);
  } catch (err) {
    // V8's message is `Invalid regular expression: /<source>/: <why>`: the why is what the author wrote.
    return `is not a valid pattern: ${(err as Error).message.split(": ").at(-1)}`;
  }
  return null;
}

/** Compiles a glob (see module doc) to an anchored RegExp over absolute paths; cached. */
function compileGlob(pattern: string): RegExp {
  const cached = cache.get(pattern);
  if (cached) return cached;
  const absolute = pattern.startsWith("/");
  const segments = (absolute ? pattern.slice(1) : `**/${pattern}`).split("/").filter((s) => s !== "");
  let source = "^";
  for (const segment of segments) {
    source += segment === "**" ? "(?:/[^/]+)*" : `/${componentSource(segment)}`;
  }
  const re = new RegExp(`${source}$`);
  cache.set(pattern, re);
  return re;
}

/** True when the absolute path `path` matches `pattern`. A trailing slash on the path is ignored. */
export function matchGlob(pattern: string, path: string): boolean {
  const p = path === "/" ? "" : path.replace(/\/+$/, "");
  return compileGlob(pattern).test(p);
}
