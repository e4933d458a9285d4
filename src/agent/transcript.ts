/**
 * The JSONL transcript of a `warden run`. Every line is one JSON object:
 * - OpenAI chat messages (`role` system | user | assistant | tool), in conversation order. Assistant
 *   lines carry `tool_calls` in the OpenAI shape, which is what `warden replay` runs.
 * - warden's own records, which have no `role` and a `warden` field naming the kind
 *   (`run_start`, `tool_result`, `decision`, `run_end`); readers that only want messages skip them.
 */
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";
import type { PolicyRecord } from "../policy/index.js";
import { parseJsonLines } from "../session/index.js";
import type { ToolResultMessage } from "../tools/index.js";

/**
 * warden's extra records. `time` is an ISO 8601 timestamp. run_start's `workspace` is the host
 * directory (absolute), `workspaceId` its device, inode and birth time at start (copy mode; decimal strings,
 * review/workspace-record.ts), and `policy` the policy the run ran under (what `warden replay` uses).
 */
export type TranscriptRecord =
  | {
      warden: "run_start";
      time: string;
      sessionId: string;
      model: string;
      task: string;
      workspace?: string;
      workspaceId?: { dev: string; ino: string; born?: string };
      policy?: PolicyRecord;
    }
  | { warden: "tool_result"; time: string; result: ToolResultMessage }
  /** A policy decision: the audit record (session, tool, argsDigest, decision, ruleId, decider, latencyMs). */
  | { warden: "decision"; time: string; audit: Record<string, unknown> }
  | { warden: "run_end"; time: string; stopReason: string; turns: number; error?: string };

export type TranscriptLine = ChatCompletionMessageParam | TranscriptRecord;

/** Appends lines to a transcript file as they happen (synchronously, so a crash keeps what ran). */
export class TranscriptWriter {
  constructor(readonly path: string) {
    writeFileSync(path, "", { mode: 0o600 });
  }

  /** Appends one line. */
  write(line: TranscriptLine): void {
    appendFileSync(this.path, `${JSON.stringify(line)}\n`);
  }
}

/** A transcript read back: the chat messages in order, and warden's records. */
export interface ParsedTranscript {
  messages: ChatCompletionMessageParam[];
  records: TranscriptRecord[];
}

/** True for a line that is an OpenAI chat message. */
function isChatMessage(line: unknown): line is ChatCompletionMessageParam {
  const role = (line as { role?: unknown } | null)?.role;
  return (
    role === "system" || role === "user" || role === "assistant" || role === "tool" || role === "developer"
  );
}

/**
 * Parses transcript text; blank lines are skipped; lines that are neither chat messages nor warden
 * records are ignored. Throws InvalidArgumentError naming the line (and `source`) for invalid JSON.
 */
export function parseRunTranscript(text: string, source?: string): ParsedTranscript {
  const parsed: ParsedTranscript = { messages: [], records: [] };
  for (const { value } of parseJsonLines(text, source)) {
    if (isChatMessage(value)) parsed.messages.push(value);
    else if (typeof (value as { warden?: unknown } | null)?.warden === "string") {
      parsed.records.push(value as TranscriptRecord);
    }
  }
  return parsed;
}

/** Reads and parses a transcript file. */
export function readRunTranscript(path: string): ParsedTranscript {
  return parseRunTranscript(readFileSync(path, "utf8"), path);
}
