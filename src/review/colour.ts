/** Colouring of unified patches for the terminal (picocolors; plain when colour is off). */
import pc from "picocolors";

/**
 * Colours a patch line by line: headers bold, hunk headers cyan, additions green, deletions red.
 * `enabled` false returns the text unchanged.
 */
export function colourPatch(text: string, enabled = pc.isColorSupported): string {
  if (!enabled) return text;
  const c = pc.createColors(true);
  return text
    .split("\n")
    .map((line) => {
      if (line.startsWith("diff --git") || line.startsWith("--- ") || line.startsWith("+++ "))
        return c.bold(line);
      if (line.startsWith("@@")) return c.cyan(line);
      if (line.startsWith("+")) return c.green(line);
      if (line.startsWith("-")) return c.red(line);
      return line;
    })
    .join("\n");
}
