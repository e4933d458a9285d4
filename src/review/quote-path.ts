/**
 * Git's C-style quoting of file names (git's quote.c, quote_c_style with core.quotePath on, git's
 * default): a name holding a control character, `"`, `\` or a byte of 0x80 or above is written in
 * double quotes with `\n`, `\t`, `\"`, `\\` and three-digit octal escapes; any other name as it is.
 * The patch renderer writes every name this way and the patch reader reads it back, so a name can
 * never start a line of the patch; the review shows names the same way, so none reaches a terminal
 * raw.
 */

/** `name` as git writes it in a patch header or a diffstat (see module doc). */
export function quotePath(name: string): string {
  const letters: Record<number, string> = { 7: "a", 8: "b", 9: "t", 10: "n", 11: "v", 12: "f", 13: "r" };
  let out = "";
  let quoted = false;
  for (const byte of Buffer.from(name, "utf8")) {
    if (byte === 0x22 || byte === 0x5c) out += `\\${String.fromCharCode(byte)}`;
    else if (byte < 0x20 || byte >= 0x7f) out += `\\${letters[byte] ?? byte.toString(8).padStart(3, "0")}`;
    else {
      out += String.fromCharCode(byte);
      continue;
    }
    quoted = true;
  }
  return quoted ? `"${out}"` : name;
}

const UNESCAPE: Record<string, number> = {
  a: 7,
  b: 8,
  t: 9,
  n: 10,
  v: 11,
  f: 12,
  r: 13,
  '"': 0x22,
  "\\": 0x5c,
};

/**
 * Reads one quoted name starting at `text[start]` (a `"`): the name and the index just past its
 * closing quote, or undefined when the quoting is malformed (an unknown escape, no closing quote).
 */
export function unquotePath(text: string, start = 0): { name: string; end: number } | undefined {
  if (text[start] !== '"') return undefined;
  const bytes: number[] = [];
  for (let i = start + 1; i < text.length; i++) {
    const c = String.fromCodePoint(text.codePointAt(i)!);
    if (c === '"') return { name: Buffer.from(bytes).toString("utf8"), end: i + 1 };
    if (c === "\n") return undefined;
    if (c !== "\\") {
      bytes.push(...Buffer.from(c, "utf8"));
      i += c.length - 1;
      continue;
    }
    const next = text[++i] ?? "";
    const octal = /^[0-3][0-7]{2}$/.exec(text.slice(i, i + 3));
    if (octal) {
      bytes.push(Number.parseInt(octal[0], 8));
      i += 2;
    } else if (UNESCAPE[next] !== undefined) bytes.push(UNESCAPE[next]);
    else return undefined;
  }
  return undefined;
}
