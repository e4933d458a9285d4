/**
 * The recorded-session corpus: every tool call of a real Pi session (fixtures/README.md), one batch
 * per assistant message, replayed from one starting tree (pi-mono at the commit before the session).
 * The session ran in /Users/badlogic/workspaces/pi-mono; that prefix in any argument becomes
 * /workspace, the replay's working directory on both sides.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import type { CorpusCall } from "./pi-container.js";

const FIXTURES = join(import.meta.dirname, "fixtures");
const RECORDED_CWD = "/Users/badlogic/workspaces/pi-mono";

function rewritePaths(value: unknown): unknown {
  if (typeof value === "string") return value.replaceAll(RECORDED_CWD, "/workspace");
  if (Array.isArray(value)) return value.map(rewritePaths);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rewritePaths(v)]));
  }
  return value;
}

/** The session's tool calls as batches, in order. */
export function sessionCorpus(): CorpusCall[][] {
  const text = gunzipSync(readFileSync(join(FIXTURES, "pi-large-session.jsonl.gz"))).toString("utf8");
  const batches: CorpusCall[][] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const entry = JSON.parse(line) as { message?: { role?: string; content?: unknown } };
    if (entry.message?.role !== "assistant" || !Array.isArray(entry.message.content)) continue;
    const calls = (
      entry.message.content as { type?: string; id?: string; name?: string; arguments?: unknown }[]
    )
      .filter((b) => b.type === "toolCall")
      .map((b) => ({ id: String(b.id), name: String(b.name), arguments: rewritePaths(b.arguments) }));
    if (calls.length > 0) batches.push(calls);
  }
  return batches;
}

/** Unpacks the session's starting tree into `dir` (which must exist). Throws when tar fails. */
export function writeSessionTree(dir: string): void {
  const result = spawnSync("tar", ["-xzf", join(FIXTURES, "pi-mono-cc88095.tar.gz"), "-C", dir]);
  if (result.status !== 0) throw new Error(`unpacking the session tree failed: ${result.stderr}`);
}
