/** Short one-line descriptions of tool calls and results for the live view. */
import type { ToolResultMessage } from "../../tools/index.js";
import { terminalSafe } from "../../util/index.js";

/** `bash: npm test`, `edit: src/a.ts`, `read: README.md`, or the tool name with compact JSON arguments. */
export function describeCall(toolName: string, args: unknown, maxChars = 100): string {
  const a = (typeof args === "object" && args !== null ? args : {}) as Record<string, unknown>;
  let what: string;
  if (typeof a.command === "string") what = a.command;
  else if (typeof a.path === "string" && typeof a.pattern === "string") what = `${a.pattern} in ${a.path}`;
  else if (typeof a.pattern === "string") what = a.pattern;
  else if (typeof a.path === "string") what = a.path;
  else what = typeof args === "string" ? args : JSON.stringify(args ?? {});
  const line = `${toolName}: ${what.replace(/\s*\n\s*/g, " ⏎ ")}`;
  return line.length > maxChars ? `${line.slice(0, maxChars - 1)}…` : line;
}

/** The text blocks of a result joined. */
export function resultText(result: Pick<ToolResultMessage, "content">): string {
  return result.content
    .filter((c) => c.type === "text")
    .map((c) => (c.type === "text" ? terminalSafe(c.text) : ""))
    .join("\n");
}

/** The last `n` non-empty lines of `text`. */
export function lastLines(text: string, n: number): string[] {
  return text
    .split("\n")
    .map((l) => l.trimEnd())
    .filter((l) => l !== "")
    .slice(-n);
}
