/**
 * A per-session bound on egress audit records (pure). Each connection through the gateway is one
 * connection record and one audit record; a sandbox that opens and abandons connections in a loop
 * made ~15,000 records in seconds, every one written to the host's audit log. Records pass while
 * a token bucket (`recordsPerSecond`, refilled continuously, holding at most `burst`) has a token;
 * past it they are counted by decision, and the caller writes one summary per window instead
 * (AuditDropSummary: how many, when, why). Nothing is lost from the counts, only the lines.
 */
import type {
  AuditDropSummary,
  AuditLimit,
  ConnectionAudit,
  NetworkOptions,
  SecretUseAudit,
} from "./types.js";

/** Default bound of a session's egress audit records: 10 per second, bursts of 200. */
export const DEFAULT_AUDIT_LIMIT: AuditLimit = { recordsPerSecond: 10, burst: 200 };

/** The limiter of one session. `nowMs` is a clock in milliseconds (Date.now in use, any in tests). */
export class AuditLimiter {
  private tokens: number;
  private lastMs: number;
  private dropped: Omit<AuditDropSummary, "from" | "to" | "limit"> & { fromMs: number; toMs: number };

  /** Throws RangeError for a rate or a burst that is not a positive number. */
  constructor(
    readonly limit: AuditLimit,
    sessionId: string,
    nowMs: number,
  ) {
    if (!(limit.recordsPerSecond > 0) || !(limit.burst >= 1))
      throw new RangeError(
        `audit limit needs recordsPerSecond > 0 and burst >= 1, got ${JSON.stringify(limit)}`,
      );
    this.tokens = limit.burst;
    this.lastMs = nowMs;
    this.dropped = { sessionId, reason: "rate-limit", dropped: 0, decisions: {}, fromMs: 0, toMs: 0 };
  }

  /** True when `record` may be written now; false when it was counted for the next summary instead. */
  admit(record: Pick<ConnectionAudit | SecretUseAudit, "decision">, nowMs: number): boolean {
    const elapsedMs = Math.max(0, nowMs - this.lastMs);
    this.lastMs = Math.max(this.lastMs, nowMs);
    this.tokens = Math.min(this.limit.burst, this.tokens + (elapsedMs * this.limit.recordsPerSecond) / 1000);
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return true;
    }
    const d = this.dropped;
    if (d.dropped === 0) d.fromMs = nowMs;
    d.dropped += 1;
    d.toMs = nowMs;
    d.decisions[record.decision] = (d.decisions[record.decision] ?? 0) + 1;
    return false;
  }

  /** Records counted since the last summary (0 when none). */
  get pending(): number {
    return this.dropped.dropped;
  }

  /** The summary of the records dropped since the last one, and a new window; null when none were. */
  takeSummary(): AuditDropSummary | null {
    const { fromMs, toMs, ...d } = this.dropped;
    if (d.dropped === 0) return null;
    this.dropped = { ...d, dropped: 0, decisions: {}, fromMs: 0, toMs: 0 };
    return {
      ...d,
      from: new Date(fromMs).toISOString(),
      to: new Date(toMs).toISOString(),
      limit: { ...this.limit },
    };
  }
}

/** How long a window of dropped records lasts before its summary goes out (ms). */
const DROP_WINDOW_MS = 1000;

/**
 * A session's egress records through two AuditLimiters of the bound `network.auditLimit`: one for
 * connection records (`network.onConnection`), one for secret-use records (`network.onSecretUse`),
 * so a loop of requests that carry a placeholder is bounded like a loop of connections, and a flood
 * of cheap connections cannot push an attempted leak's record out. Records over a bound are counted
 * by decision, and each limiter's summary goes to `onAuditDropped` one window after the first of
 * them (and at `flush`, when the gateway is detached).
 */
export function boundedAudit(
  sessionId: string,
  network: Extract<NetworkOptions, { mode: "allowlist" }>,
): { connection(record: ConnectionAudit): void; secret(record: SecretUseAudit): void; flush(): void } {
  const limit = network.auditLimit ?? DEFAULT_AUDIT_LIMIT;
  const limiters = [
    new AuditLimiter(limit, sessionId, Date.now()),
    new AuditLimiter(limit, sessionId, Date.now()),
  ];
  const [connections, secrets] = limiters as [AuditLimiter, AuditLimiter];
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    for (const limiter of limiters) {
      const summary = limiter.takeSummary();
      if (summary) network.onAuditDropped?.(summary);
    }
  };
  const admit = (limiter: AuditLimiter, record: Pick<ConnectionAudit | SecretUseAudit, "decision">) => {
    if (limiter.admit(record, Date.now())) return true;
    timer ??= setTimeout(flush, DROP_WINDOW_MS);
    return false;
  };
  return {
    connection: (record) => {
      if (admit(connections, record)) network.onConnection?.(record);
    },
    secret: (record) => {
      if (admit(secrets, record)) network.onSecretUse?.(record);
    },
    flush,
  };
}
