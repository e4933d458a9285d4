/**
 * The recorded-session corpus: every tool call of a real Pi session (pi-mono's author working on
 * pi-mono, 2025-11-20; 391 calls: bash, edit, read, write), one batch per assistant message,
 * replayed from one starting tree rebuilt from the session's own results (session-tree.ts). The
 * session is read from ../shared/fixtures/pi-large-session.jsonl beside the repository (CI puts a
 * copy of shared/ there); it is never copied into the repository. The session ran in
 * /Users/badlogic/workspaces/pi-mono; that prefix in any argument or result becomes /workspace, the
 * replay's working directory on both sides.
 */
import { existsSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { omitUndefined } from "../../src/util/index.js";
import type { CorpusCall } from "./pi-container.js";
import { type RecordedCall, sessionTree } from "./session-tree.js";

/** The recorded session, resolved from the repository root. */
export const SESSION_PATH = resolve(import.meta.dirname, "../../../shared/fixtures/pi-large-session.jsonl");
const RECORDED_CWD = "/Users/badlogic/workspaces/pi-mono";

interface Block {
  type?: string;
  id?: string;
  name?: string;
  arguments?: unknown;
  text?: string;
}
interface Entry {
  message?: {
    role?: string;
    content?: Block[];
    toolCallId?: string;
    isError?: boolean;
    details?: { diff?: unknown };
  };
}

function rewritePaths(value: unknown): unknown {
  if (typeof value === "string") return value.replaceAll(RECORDED_CWD, "/workspace");
  if (Array.isArray(value)) return value.map(rewritePaths);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rewritePaths(v)]));
  }
  return value;
}

/** The session's entries. Throws, naming the path, when the session file is missing. */
function entries(path: string): Entry[] {
  if (!existsSync(path)) {
    throw new Error(
      `the recorded Pi session is missing: ${path} (a copy of shared/ must sit beside the repository; ` +
        "it is another project's recorded work, so it is never committed here: see AGENTS.md, npm run test:pi)",
    );
  }
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Entry);
}

/** The session's tool calls as batches, in order. Throws, naming `path`, when it is missing. */
export function sessionCorpus(path = SESSION_PATH): CorpusCall[][] {
  const batches: CorpusCall[][] = [];
  for (const { message } of entries(path)) {
    if (message?.role !== "assistant" || !Array.isArray(message.content)) continue;
    const calls = message.content
      .filter((b) => b.type === "toolCall")
      .map((b) => ({ id: String(b.id), name: String(b.name), arguments: rewritePaths(b.arguments) }));
    if (calls.length > 0) batches.push(calls);
  }
  return batches;
}

/**
 * The distinct bash commands of the session, in first-seen order (the false-refusal corpus of
 * test/pi/false-refusals.test.ts). Throws, naming `path`, when it is missing.
 */
export function sessionBashCommands(path = SESSION_PATH): string[] {
  const commands = new Set<string>();
  for (const { message } of entries(path)) {
    if (!Array.isArray(message?.content)) continue;
    for (const part of message.content) {
      const command = (part.arguments as { command?: unknown } | undefined)?.command;
      if (part.type === "toolCall" && part.name === "bash" && typeof command === "string")
        commands.add(command);
    }
  }
  return [...commands];
}

/** The session's calls with their recorded results, in order (for rebuilding the starting tree). */
function recordedCalls(): RecordedCall[] {
  const all = entries(SESSION_PATH);
  const results = new Map<string, NonNullable<Entry["message"]>>();
  for (const { message } of all) {
    if (message?.role === "toolResult" && message.toolCallId) results.set(message.toolCallId, message);
  }
  return sessionCorpus()
    .flat()
    .map((call) => {
      const result = results.get(call.id);
      const text = result?.content
        ?.filter((b) => b.type === "text")
        .map((b) => b.text ?? "")
        .join("\n");
      const diff = result?.details?.diff;
      return omitUndefined({
        name: call.name,
        arguments: (call.arguments ?? {}) as Record<string, unknown>,
        resultText: text === undefined ? undefined : (rewritePaths(text) as string),
        isError: result?.isError,
        diff: typeof diff === "string" ? diff : undefined,
      });
    });
}

/** Writes the session's starting tree (rebuilt by sessionTree) into `dir`, which must exist. */
export async function writeSessionTree(dir: string): Promise<void> {
  for (const [rel, content] of sessionTree(recordedCalls())) {
    const path = join(dir, rel);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, content);
  }
}
