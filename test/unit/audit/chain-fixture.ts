/** A small chained audit log written by AuditChainWriter, for the chain and verify tests. */
import { createPublicKey, type KeyObject } from "node:crypto";
import {
  AuditChainWriter,
  auditKeyId,
  ChainState,
  lineHash,
  linksOf,
  streamsOf,
} from "../../../src/audit/index.js";

/** A writer of `key` (checkpoints every 4 records, a fixed time) whose lines go to `lines`. */
export function testWriter(key: KeyObject, lines: string[]): AuditChainWriter {
  const publicKey = createPublicKey(key).export({ type: "spki", format: "pem" }).toString();
  return new AuditChainWriter({
    signingKey: key,
    checkpointEvery: 4,
    emit: (line) => lines.push(line),
    now: () => "2026-12-07T12:00:00.000Z",
    keyRecord: { kind: "audit-key", keyId: auditKeyId(key), publicKey, source: "config" },
  });
}

const s1 = { tenant: "alpha", session: "s1" };
const tool = (toolCallId: string) => ({
  kind: "tool",
  ...s1,
  batch: "b1",
  tool: "bash",
  toolCallId,
  bytes: 3,
});

/**
 * One session's life, signed with `key`. Its 12 lines (tenant:alpha seq / session:s1 seq):
 * 1 created (0/0), 2 a request without tenant (server 0), 3 tool c1 (1/1), 4 approval c2 (2/2),
 * 5 tool c2 (3/3), 6 audit-key (server 1), 7 checkpoint tenant:alpha (4), 8 checkpoint
 * session:s1 (5/4), 9 tool c3 (6/5), 10 closed (7/6), 11 checkpoint session:s1 (8/7),
 * 12 checkpoint tenant:alpha (9).
 */
export function sessionLog(key: KeyObject): string[] {
  const lines: string[] = [];
  const w = testWriter(key, lines);
  w.write({ kind: "session", event: "created", ...s1 });
  w.write({ kind: "request", method: "GET", route: "/v1/health", status: 401, bytes: 0, durationMs: 1 });
  w.write(tool("c1"));
  w.write({
    kind: "approval",
    ...s1,
    toolCallId: "c2",
    tool: "bash",
    answer: "allow-once",
    waitMs: 5,
    who: "k1",
  });
  w.write(tool("c2"));
  w.write(tool("c3"));
  w.write({ kind: "session", event: "closed", ...s1, reason: "deleted" });
  w.endSession("alpha", "s1");
  return lines;
}

/** `lines` with every chain link recomputed (what someone without the key can do after an edit). */
export function rechain(lines: readonly string[]): string[] {
  const state = new ChainState();
  return lines.map((line) => {
    const record = JSON.parse(line) as Record<string, unknown>;
    if (!linksOf(record)) return line;
    const links = state.links(streamsOf(record));
    const text = JSON.stringify({ ...record, chain: links });
    state.advance(links, lineHash(text));
    return text;
  });
}
