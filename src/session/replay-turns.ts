/**
 * The turns `warden replay` runs, read from a recorded transcript (src/agent/transcript.ts writes
 * `warden run`'s): JSONL, one message per line in the OpenAI chat shape.
 * Assistant lines `{role:"assistant", content?, tool_calls:[{id, type:"function", function:{name,
 * arguments:"<json string>"}}]}` are turns; every other line (user, tool, system) is skipped.
 *
 * Placeholders: inside an arguments string, `{{spill:<tool_call_id>}}` stands for the spill handle
 * (`/spill/<name>`) of an earlier call of the same replay (known only at run time); it is replaced,
 * JSON-escaped, before parsing.
 */
import { InvalidArgumentError } from "../errors.js";
import type { ToolCall, ToolResultMessage } from "../tools/index.js";
import { jsonParseReason } from "../util/index.js";

/** One tool call as recorded: the arguments are still the raw JSON string. */
export interface RecordedToolCall {
  id: string;
  name: string;
  argumentsText: string;
}

/** One assistant turn: its 1-based line in the file, its text, and its calls (one batch). */
export interface ReplayTurn {
  line: number;
  content?: string;
  calls: RecordedToolCall[];
}

function recordedCall(raw: unknown, line: number, index: number): RecordedToolCall {
  const c = raw as { id?: unknown; function?: { name?: unknown; arguments?: unknown } } | null;
  if (typeof c?.function?.name !== "string") {
    throw new InvalidArgumentError(`Transcript line ${line}: tool_calls[${index}] has no function.name.`);
  }
  const args = c.function.arguments;
  return {
    id: typeof c.id === "string" ? c.id : `call_${line}_${index}`,
    name: c.function.name,
    argumentsText: typeof args === "string" ? args : JSON.stringify(args ?? {}),
  };
}

/** One non-blank line of a JSONL text: its 1-based line number and its parsed value. */
export interface JsonLine {
  line: number;
  value: unknown;
}

/**
 * Parses JSONL text (one JSON value a line; blank lines skipped; LF or CRLF), the one reader of both
 * transcript kinds (`warden run`'s and `warden replay`'s). Throws InvalidArgumentError naming the line,
 * and `source` (a file name) when given, for a line that is not JSON.
 */
export function parseJsonLines(text: string, source?: string): JsonLine[] {
  const lines: JsonLine[] = [];
  for (const [i, raw] of text.split(/\r?\n/).entries()) {
    if (raw.trim() === "") continue;
    try {
      lines.push({ line: i + 1, value: JSON.parse(raw) });
    } catch (err) {
      const reason = jsonParseReason(err);
      const where = source === undefined ? "" : ` of ${source}`;
      throw new InvalidArgumentError(
        `Transcript line ${i + 1}${where} is not valid JSON (${reason}); fix or remove it.`,
      );
    }
  }
  return lines;
}

/**
 * Parses a JSONL transcript. Blank lines and non-assistant messages are skipped, as are assistant
 * messages without tool calls. Throws InvalidArgumentError naming the line for a line that is not JSON.
 */
export function parseReplayTurns(text: string): ReplayTurn[] {
  const turns: ReplayTurn[] = [];
  for (const { line, value } of parseJsonLines(text)) {
    const message = value as { role?: unknown; content?: unknown; tool_calls?: unknown } | null;
    if (
      message?.role !== "assistant" ||
      !Array.isArray(message.tool_calls) ||
      message.tool_calls.length === 0
    ) {
      continue;
    }
    const turn: ReplayTurn = { line, calls: message.tool_calls.map((c, j) => recordedCall(c, line, j)) };
    if (typeof message.content === "string" && message.content !== "") turn.content = message.content;
    turns.push(turn);
  }
  return turns;
}

const PLACEHOLDER = /\{\{spill:([^}]+)\}\}/g;

/**
 * Replaces each `{{spill:<id>}}` in `text` with `lookup(id)` escaped for a JSON string.
 * Returns the text and the ids `lookup` did not know.
 */
export function resolvePlaceholders(
  text: string,
  lookup: (toolCallId: string) => string | undefined,
): { text: string; missing: string[] } {
  const missing: string[] = [];
  const resolved = text.replace(PLACEHOLDER, (whole, id: string) => {
    const value = lookup(id);
    if (value === undefined) {
      missing.push(id);
      return whole;
    }
    return JSON.stringify(value).slice(1, -1);
  });
  return { text: resolved, missing };
}

/** A recorded call as a ToolCall: arguments parsed from JSON ("" counts as {}), else kept as the raw string. */
export function toToolCall(recorded: RecordedToolCall): ToolCall {
  let args: unknown = recorded.argumentsText;
  if (recorded.argumentsText.trim() === "") args = {};
  else {
    try {
      args = JSON.parse(recorded.argumentsText);
    } catch {
      // Kept as a string: validation reports it with the received text.
    }
  }
  return { id: recorded.id, name: recorded.name, arguments: args };
}

const SPILL_KEYS = new Set(["fullOutputPath", "spillPath", "spillFile"]);

/**
 * The spill file a result names in its details (Pi's bash `details.fullOutputPath`, a spill handle in
 * warden, or `spillPath`/`spillFile`, at any depth), or undefined.
 */
export function spillPathOf(result: ToolResultMessage): string | undefined {
  const seen = new Set<unknown>();
  const visit = (value: unknown): string | undefined => {
    if (typeof value !== "object" || value === null || seen.has(value)) return undefined;
    seen.add(value);
    for (const [key, child] of Object.entries(value)) {
      if (SPILL_KEYS.has(key) && typeof child === "string") return child;
    }
    for (const child of Object.values(value)) {
      const found = visit(child);
      if (found) return found;
    }
    return undefined;
  };
  return visit(result.details);
}
