/** Notices the tools append to model-visible text, worded once. */

/** `[N invalid UTF-8 or NUL bytes replaced with U+FFFD]`, so the model knows bytes were altered (public fault 16). */
export function replacedBytesNotice(count: number): string {
  return `[${count} invalid UTF-8 or NUL ${count === 1 ? "byte" : "bytes"} replaced with U+FFFD]`;
}

/** Joins text and notices with blank lines, skipping empty parts (Pi's "output + blank + status"). */
export function joinBlocks(...parts: (string | undefined)[]): string {
  return parts.filter((p): p is string => p !== undefined && p !== "").join("\n\n");
}
