/**
 * The server's audit log: one pino JSON line per HTTP request and per tool decision or result,
 * appended with synchronous writes (one write(2) per line, O_APPEND) so a `kill -9` can lose at most
 * the line being formatted, never leave half of one. At start, a torn last line left by an older
 * writer or a full disk is cut off, so every line in the file parses.
 */

import { closeSync, fstatSync, ftruncateSync, mkdirSync, openSync, readSync } from "node:fs";
import { dirname } from "node:path";
import pino, { type Logger } from "pino";
import type { AuditDropSummary, ConnectionAudit } from "../egress/index.js";
import type { CallVerdict, Decider } from "../pipeline/index.js";

/** One audit line about a tool call. Sizes in bytes, durations in ms. */
export interface ToolAuditEntry {
  kind: "tool";
  tenant: string;
  session: string;
  /** The server's id of the call's batch (the call's key with toolCallId; inflight-calls.ts). */
  batch: string;
  tool: string;
  toolCallId: string;
  /** The policy's final answer (after any approval); "run" when no policy applies. */
  decision: CallVerdict | "run";
  /** Id of the rule that decided, when a policy did. */
  rule?: string;
  /** Who decided; "none" when no policy applies. */
  decider: Decider | "none";
  isError: boolean;
  exitCode?: number;
  bytes: number;
  /** The call's own time in ms, from its start to its end, without the wait for an approval. */
  durationMs: number;
  /** How long the call waited for a person's answer to an ask, in ms (absent when none was asked). */
  approvalMs?: number;
}

/** One audit line about an HTTP request. */
interface RequestAuditEntry {
  kind: "request";
  tenant?: string;
  key?: string;
  session?: string;
  method: string;
  route: string;
  status: number;
  bytes: number;
  durationMs: number;
}

/** Any other lifecycle event (session created, closed, adopted, orphan removed). */
interface LifecycleAuditEntry {
  kind: "session";
  event: "created" | "closed" | "adopted" | "orphan-removed" | "record-dropped";
  tenant: string;
  session: string;
  reason?: string;
  containerId?: string;
}

/**
 * A tool call that was accepted but had not finished when the server died (kill -9, crash):
 * written at the next start by reconcile (inflight-calls.ts). `startedAt` is its batch's start.
 */
interface InterruptedCallAuditEntry {
  kind: "interrupted";
  tenant: string;
  session: string;
  /** The batch's server id (absent for a batch journalled by a server before batch ids). */
  batch?: string;
  tool: string;
  toolCallId: string;
  startedAt: string;
}

/**
 * One connection through a session's egress gateway (src/egress: domain, port, decision, rule,
 * bytes each way, duration).
 */
interface NetworkAuditEntry extends Omit<ConnectionAudit, "sessionId"> {
  kind: "network";
  tenant: string;
  session: string;
}

/**
 * The egress records of one session not written in one window because they were over
 * `networkAuditLimit` (src/egress audit-limit.ts): how many, by decision, when, and why.
 */
interface NetworkDroppedAuditEntry extends Omit<AuditDropSummary, "sessionId"> {
  kind: "network-dropped";
  tenant: string;
  session: string;
}

export type AuditEntry =
  | ToolAuditEntry
  | InterruptedCallAuditEntry
  | RequestAuditEntry
  | LifecycleAuditEntry
  | NetworkAuditEntry
  | NetworkDroppedAuditEntry;

/**
 * The server's audit log: appends its request, tool, session, interrupted-call and network lines
 * (`AuditEntry`). Not the policy hook's decision line, which is `PolicyAuditLog` (src/audit/).
 */
export interface ServerAuditLog {
  write(entry: AuditEntry): void;
}

/**
 * Truncates a file after its last newline when it ends inside a line (a torn line of any length:
 * the file is read backwards in 1 MiB chunks until a newline). Returns bytes removed.
 */
export function repairTornTail(path: string): number {
  let fd: number;
  try {
    fd = openSync(path, "r+");
  } catch {
    return 0;
  }
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return 0;
    const chunk = Buffer.alloc(Math.min(size, 1 << 20));
    let end = size;
    let keep = 0;
    while (end > 0) {
      const start = Math.max(0, end - chunk.length);
      readSync(fd, chunk, 0, end - start, start);
      const lastNewline = chunk.subarray(0, end - start).lastIndexOf(0x0a);
      if (lastNewline >= 0) {
        keep = start + lastNewline + 1;
        break;
      }
      end = start;
    }
    if (keep === size) return 0;
    ftruncateSync(fd, keep);
    return size - keep;
  } finally {
    closeSync(fd);
  }
}

/** A pino audit logger on `path` (created 0600, parent created) with the torn tail repaired. */
export function createFileAuditLog(path: string): ServerAuditLog & { logger: Logger } {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  repairTornTail(path);
  closeSync(openSync(path, "a", 0o600));
  const logger = pino(
    { base: null, messageKey: "msg", timestamp: pino.stdTimeFunctions.isoTime },
    pino.destination({ dest: path, sync: true, append: true }),
  );
  return { logger, write: (entry) => logger.info(entry) };
}

/** An audit log that keeps entries in memory (tests). */
export function createMemoryAuditLog(): ServerAuditLog & { entries: AuditEntry[] } {
  const entries: AuditEntry[] = [];
  return { entries, write: (entry) => entries.push(entry) };
}
