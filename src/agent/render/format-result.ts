/**
 * How the CLI (exec, run) shows tool results to a person: text blocks as they are, images as a one-line note,
 * an edit's display diff coloured, and a marker for errors. `--json` bypasses this entirely.
 */
import pc from "picocolors";
import type { ToolCall, ToolResultMessage } from "../../tools/index.js";
import { terminalSafe } from "../../util/index.js";

/** The text of a result's content: text blocks joined by newlines, images as `[image <mime>, N bytes]`. */
export function resultText(result: ToolResultMessage): string {
  return result.content
    .map((block) =>
      block.type === "text"
        ? terminalSafe(block.text)
        : `[image ${block.mimeType}, ${Buffer.byteLength(block.data, "base64")} bytes]`,
    )
    .join("\n");
}

/** The display diff a result carries in `details.diff` (the edit tool's), if any. */
export function resultDiff(result: Pick<ToolResultMessage, "details">): string | undefined {
  const details = result.details as { diff?: unknown } | undefined;
  return typeof details?.diff === "string" && details.diff !== "" ? terminalSafe(details.diff) : undefined;
}

/** Colours a display diff: `+` lines green, `-` lines red. */
function colourDiff(diff: string): string {
  return diff
    .split("\n")
    .map((line) =>
      line.startsWith("+") ? pc.green(line) : line.startsWith("-") ? pc.red(line) : pc.dim(line),
    )
    .join("\n");
}

/** The full human rendering of a result: its text, then its diff when it has one. */
export function renderResult(result: ToolResultMessage): string {
  const diff = resultDiff(result);
  const text = resultText(result);
  return diff ? `${text}\n${colourDiff(diff)}` : text;
}

/** A one-line header for a call: `▶ [3] bash {"command":"ls"}`, arguments cut at `maxChars` (default 160). */
export function callHeader(index: number, call: ToolCall, maxChars = 160): string {
  const args = typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments);
  const safe = terminalSafe(args);
  const shown = safe.length > maxChars ? `${safe.slice(0, maxChars)}…` : safe;
  return `${pc.cyan(`▶ [${index}] ${terminalSafe(call.name)}`)} ${pc.dim(shown)}`;
}

/**
 * The header of a replayed turn: `── turn 2 (line 5): <assistant text>`. The text (the model's, as
 * recorded) is made terminal-safe like every other model-made string printed.
 */
export function turnHeader(number: number, line: number, content?: string): string {
  return pc.bold(`\n── turn ${number} (line ${line})${content ? `: ${terminalSafe(content)}` : ""}`);
}

/** A finished call's status line with its tool-call id (client-made, so made terminal-safe). */
export function resultStatus(result: ToolResultMessage, durationMs: number, approvalMs = 0): string {
  return `${statusLine(result, durationMs, approvalMs)} ${pc.dim(terminalSafe(result.toolCallId))}`;
}

/**
 * A one-line status for a finished call: `✓ ok` or `✗ error`, with its duration in ms. `durationMs`
 * runs from the call's start event to its end; `approvalMs` of it (CallDecision.approvalMs) went to
 * waiting for a person's answer and is shown apart: `✓ ok (12 ms, 4100 ms waiting for approval)`.
 */
export function statusLine(result: ToolResultMessage, durationMs: number, approvalMs = 0): string {
  const waited = approvalMs > 0 ? `, ${approvalMs} ms waiting for approval` : "";
  const text = `(${Math.max(0, durationMs - approvalMs)} ms${waited})`;
  return result.isError ? pc.red(`✗ error ${text}`) : pc.green(`✓ ok ${text}`);
}

/**
 * Shortens `text` for a terminal: trailing newlines dropped; when it has more than `maxLines` lines
 * (default 30), the first and last `keepLines` (default 10) are kept around a "… N lines not shown …" line.
 */
export function previewText(text: string, maxLines = 30, keepLines = 10): string {
  const lines = text.replace(/\n+$/, "").split("\n");
  if (lines.length <= maxLines) return lines.join("\n");
  const hidden = lines.length - 2 * keepLines;
  return [
    ...lines.slice(0, keepLines),
    pc.dim(`… ${hidden} lines not shown (--full shows them; --out keeps every result) …`),
    ...lines.slice(-keepLines),
  ].join("\n");
}

/** Indents every line of `text` by `prefix`. */
export function indent(text: string, prefix = "  "): string {
  return text
    .split("\n")
    .map((line) => `${prefix}${line}`)
    .join("\n");
}
