/**
 * Which tool calls run in each session, and which ran recently: the audit log links an egress
 * record, a secret use or an approval to the call that caused it, the one call of the session that
 * was running when the connection (or request) started. When none, or more than one, was running
 * then, nobody can know which one it was, and the record carries no link.
 */
import type { AuditEntry, CallLink, ServerAuditLog } from "../audit.js";

/** One call's span: start and end in epoch ms (end undefined while it runs). */
interface CallSpan {
  toolCallId: string;
  batch: string;
  startMs: number;
  endMs?: number;
}

/** Spans kept per session (running ones and the latest ended ones). */
const KEPT_SPANS = 64;

/** The calls of every live session (one per server). */
export class RunningCalls {
  private readonly bySession = new Map<string, CallSpan[]>();

  /**
   * Marks a call started at `atMs`; returns the function that marks it ended (at its argument,
   * epoch ms; the first call counts).
   */
  start(session: string, call: { toolCallId: string; batch: string }, atMs: number): (endMs: number) => void {
    const span: CallSpan = { ...call, startMs: atMs };
    const spans = this.bySession.get(session) ?? [];
    spans.push(span);
    if (spans.length > KEPT_SPANS) {
      const oldestEnded = spans.findIndex((s) => s.endMs !== undefined);
      if (oldestEnded !== -1) spans.splice(oldestEnded, 1);
    }
    this.bySession.set(session, spans);
    return (endMs) => {
      span.endMs ??= endMs;
    };
  }

  /** The one call of `session` that was running at `atMs` (epoch ms); undefined when none or several were. */
  at(session: string, atMs: number): Required<CallLink> | undefined {
    const running = (this.bySession.get(session) ?? []).filter(
      (s) => s.startMs <= atMs && (s.endMs === undefined || atMs <= s.endMs),
    );
    return running.length === 1
      ? { toolCallId: running[0]!.toolCallId, batch: running[0]!.batch }
      : undefined;
  }

  /** The batch of the running call `toolCallId` of `session`, when exactly one running call has that id. */
  batchOf(session: string, toolCallId: string): string | undefined {
    const running = (this.bySession.get(session) ?? []).filter(
      (s) => s.toolCallId === toolCallId && s.endMs === undefined,
    );
    return running.length === 1 ? running[0]!.batch : undefined;
  }

  /** Drops a session's spans (it closed). */
  forget(session: string): void {
    this.bySession.delete(session);
  }
}

/**
 * `log` with its `network` and `secret` records of `session` linked (toolCallId, batch) to the call
 * that was running when the connection or request started: a network record's `time` is its end,
 * so its start is `time - durationMs`; a secret record's `time` is its request's.
 */
export function linkedAuditLog(log: ServerAuditLog, calls: RunningCalls, session: string): ServerAuditLog {
  const write = (entry: AuditEntry): void => {
    if ((entry.kind !== "network" && entry.kind !== "secret") || entry.toolCallId !== undefined) {
      log.write(entry);
      return;
    }
    const startMs = Date.parse(entry.time) - (entry.kind === "network" ? entry.durationMs : 0);
    const link = Number.isFinite(startMs) ? calls.at(session, startMs) : undefined;
    log.write(link ? { ...entry, ...link } : entry);
  };
  return { write };
}
