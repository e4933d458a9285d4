/**
 * git's configuration file syntax, read as git reads it (git-config(1), "CONFIGURATION FILE";
 * the reader is git's config.c `git_parse_source`, `get_base_var`, `get_value`, `parse_value`),
 * so that commands/git-config.ts sees every entry git would. No npm parser does: the `ini` family drops a
 * key written on its section header's line (`[core] fsmonitor = x`, which git accepts), knows no
 * quoted subsections nor backslash continuations. Pure.
 *
 * What git accepts, and this reads the same way:
 * - sections `[section]`, `[section "subsection"]` (subsection case kept, `\"` and `\\` escaped)
 *   and the old `[section.subsection]` (all lowercased); section and key names case-insensitive;
 * - a key on the same line as its header, after any whitespace (`[core]fsmonitor=x`, `[core]\rx`);
 * - `key = value`, or `key` alone (a boolean true); comments `#` and `;` to the end of a line,
 *   also after a value outside quotes;
 * - values: surrounding whitespace dropped, inner whitespace runs kept as spaces, `"…"` quoted
 *   parts, escapes `\"` `\\` `\n` `\t` `\b`, and backslash-newline continuing on the next line;
 * - CRLF line ends, a UTF-8 byte-order mark at the start.
 * Where git would stop with "bad config line N", this stops too and says so (ParsedConfig.error).
 */

/** One `section[.subsection].key = value` entry, in file order. */
export interface ConfigEntry {
  /** Lowercased section name (`core`, `diff`, `includeif`). */
  section: string;
  /** Subsection as git keeps it (`"Sub"` case kept; `[a.B]` → `b`), or null. */
  subsection: string | null;
  /** Lowercased key name. */
  key: string;
  /** The value as git sees it (quotes and escapes resolved); null for a key without `=` (true). */
  value: string | null;
  /** The value's text as written after `=` (continuations kept, ends trimmed); null without `=`. */
  written: string | null;
  /** 1-based line of the key. */
  line: number;
}

/** Every entry of a config text, and where git would refuse it (its entries up to there). */
export interface ParsedConfig {
  entries: ConfigEntry[];
  /** `line N: what` where git's reader stops with "bad config line N"; null when git reads it all. */
  error: string | null;
}

const isSpace = (c: string | undefined) => c !== undefined && /^[ \t\n\v\f\r]$/.test(c);
const isKeyChar = (c: string | undefined) => c !== undefined && /^[A-Za-z0-9-]$/.test(c);
const ESCAPES: Record<string, string> = { n: "\n", t: "\t", b: "\b", '"': '"', "\\": "\\" };

/** Parses `text` as git's config reader does (see module doc). Pure; never throws. */
export function parseGitConfig(text: string): ParsedConfig {
  // git's get_next_char reads "\r\n" as "\n"; a lone "\r" stays (whitespace between tokens).
  const s = text.replace(/^\uFEFF/, "").replace(/\r\n/g, "\n");
  const entries: ConfigEntry[] = [];
  let i = 0;
  let line = 1;
  let section: string | null = null;
  let subsection: string | null = null;
  const fail = (what: string): ParsedConfig => ({ entries, error: `line ${line}: ${what}` });
  while (i < s.length) {
    const c = s[i] as string;
    if (c === "\n") {
      line++;
      i++;
    } else if (isSpace(c)) i++;
    else if (c === "#" || c === ";") {
      while (i < s.length && s[i] !== "\n") i++;
    } else if (c === "[") {
      const header = readHeader(s, i + 1);
      if (typeof header === "string") return fail(header);
      [section, subsection] = [header.section, header.subsection];
      i = header.end;
    } else if (/[A-Za-z]/.test(c)) {
      if (section === null) return fail("a key before any [section]");
      const start = line;
      let key = "";
      while (isKeyChar(s[i])) key += (s[i++] as string).toLowerCase();
      while (s[i] === " " || s[i] === "\t") i++;
      let value: string | null = null;
      let written: string | null = null;
      if (i < s.length && s[i] !== "\n") {
        if (s[i] !== "=") return fail(`"${key}" is followed by neither "=" nor the line's end`);
        const parsed = readValue(s, i + 1);
        if (typeof parsed === "string") return fail(parsed);
        ({ value } = parsed);
        written = s.slice(i + 1, parsed.end).trim();
        line += parsed.lines;
        i = parsed.end;
      }
      entries.push({ section, subsection, key, value, written, line: start });
    } else return fail(`unexpected "${c}"`);
  }
  return { entries, error: null };
}

/** A header from just after its `[`: names and the index after `]`, or what git refuses. */
function readHeader(
  s: string,
  from: number,
): { section: string; subsection: string | null; end: number } | string {
  let i = from;
  let name = "";
  for (;;) {
    const c = s[i];
    if (c === undefined) return "a section header without its ]";
    if (c === "]") break;
    if (isSpace(c)) {
      while (isSpace(s[i])) i++;
      if (s[i] !== '"') return "a section header's subsection is not quoted";
      let sub = "";
      for (i++; ; i++) {
        let d = s[i];
        if (d === undefined || d === "\n") return "a subsection without its closing quote";
        if (d === '"') break;
        if (d === "\\") {
          d = s[++i];
          if (d === undefined || d === "\n") return "a subsection ending in a backslash";
        }
        sub += d;
      }
      if (s[i + 1] !== "]") return "a section header's subsection is not followed by ]";
      return { ...split(name), subsection: sub, end: i + 2 };
    }
    if (!isKeyChar(c) && c !== ".") return `"${c}" in a section name`;
    name += c.toLowerCase();
    i++;
  }
  if (name === "") return "an empty section name";
  const { section, subsection } = split(name);
  return { section, subsection, end: i + 1 };
}

/** `a.b.c` → section `a`, subsection `b.c` (git's old `[section.subsection]` form). */
function split(name: string): { section: string; subsection: string | null } {
  const dot = name.indexOf(".");
  return dot < 0
    ? { section: name, subsection: null }
    : { section: name.slice(0, dot), subsection: name.slice(dot + 1) };
}

/** A value from just after its `=` (git's parse_value): the value, its end and lines continued. */
function readValue(s: string, from: number): { value: string; end: number; lines: number } | string {
  let value = "";
  let spaces = 0;
  let quoted = false;
  let comment = false;
  let lines = 0;
  let i = from;
  for (; ; i++) {
    const c = s[i];
    if (c === undefined || c === "\n") {
      if (quoted) return "a quoted value without its closing quote";
      return { value, end: i, lines };
    }
    if (comment) continue;
    if (isSpace(c) && !quoted) {
      if (value.length > 0) spaces++;
      continue;
    }
    if (!quoted && (c === ";" || c === "#")) {
      comment = true;
      continue;
    }
    value += " ".repeat(spaces);
    spaces = 0;
    if (c === "\\") {
      const e = s[++i];
      if (e === "\n") {
        lines++;
        continue;
      }
      const escaped = e === undefined ? undefined : ESCAPES[e];
      if (escaped === undefined) return `an unknown escape "\\${e ?? ""}" in a value`;
      value += escaped;
    } else if (c === '"') quoted = !quoted;
    else value += c;
  }
}
