import { describe, expect, it } from "vitest";
import {
  type AuditDropSummary,
  AuditLimiter,
  type ConnectionAudit,
  DEFAULT_AUDIT_LIMIT,
} from "../../../src/egress/index.js";

const record = (decision: ConnectionAudit["decision"]): ConnectionAudit => ({
  sessionId: "s1",
  time: "2026-12-01T00:00:00.000Z",
  domain: "-",
  port: 0,
  method: "NONE",
  decision,
  rule: "not-listed",
  bytesOut: 0,
  bytesIn: 0,
  durationMs: 0,
});

describe("AuditLimiter", () => {
  it("lets the burst through at once, then counts the rest by decision for one summary", () => {
    const t0 = Date.parse("2026-12-01T10:00:00.000Z");
    const limiter = new AuditLimiter({ recordsPerSecond: 10, burst: 5 }, "s1", t0);
    const admitted = Array.from({ length: 20 }, (_, i) =>
      limiter.admit(record(i % 4 ? "deny" : "allow"), t0),
    );
    expect(admitted.filter(Boolean).length).toBe(5);
    expect(limiter.pending).toBe(15);
    expect(limiter.takeSummary()).toEqual({
      sessionId: "s1",
      reason: "rate-limit",
      dropped: 15,
      decisions: { deny: 12, allow: 3 },
      from: "2026-12-01T10:00:00.000Z",
      to: "2026-12-01T10:00:00.000Z",
      limit: { recordsPerSecond: 10, burst: 5 },
    });
    expect(limiter.takeSummary()).toBeNull();
  });

  it("refills at recordsPerSecond, never above the burst", () => {
    const t0 = 1_000_000;
    const limiter = new AuditLimiter({ recordsPerSecond: 10, burst: 5 }, "s1", t0);
    for (let i = 0; i < 5; i++) limiter.admit(record("deny"), t0);
    expect(limiter.admit(record("deny"), t0 + 50)).toBe(false); // half a token
    expect(limiter.admit(record("deny"), t0 + 100)).toBe(true); // one token after 100 ms
    // A long pause refills the burst, not more.
    const after = Array.from({ length: 8 }, () => limiter.admit(record("deny"), t0 + 60_000));
    expect(after.filter(Boolean).length).toBe(5);
    expect(limiter.takeSummary()).toMatchObject({ dropped: 4, from: new Date(t0 + 50).toISOString() });
  });

  it("keeps 2,000 records at once to the burst, with the exact count of the others", () => {
    const limiter = new AuditLimiter(DEFAULT_AUDIT_LIMIT, "s1", 0);
    let written = 0;
    for (let i = 0; i < 2000; i++) if (limiter.admit(record("deny"), 0)) written++;
    expect([written, limiter.takeSummary()?.dropped]).toEqual([200, 1800]);
  });

  it("refuses a limit that is not positive", () => {
    expect(() => new AuditLimiter({ recordsPerSecond: 0, burst: 5 }, "s1", 0)).toThrow(RangeError);
    expect(() => new AuditLimiter({ recordsPerSecond: 1, burst: 0 }, "s1", 0)).toThrow(RangeError);
  });
});

describe("boundedAudit", () => {
  it("bounds a loop of requests that carry a placeholder like a loop of connections, each in a bucket of its own, counted by decision", async () => {
    const { boundedAudit } = await import("../../../src/egress/audit-limit.js");
    const secrets: string[] = [];
    const connections: string[] = [];
    const summaries: AuditDropSummary[] = [];
    const audit = boundedAudit("s1", {
      mode: "allowlist",
      rules: [],
      auditLimit: { recordsPerSecond: 0.001, burst: 3 },
      onSecretUse: (r) => secrets.push(r.decision),
      onConnection: (r) => connections.push(r.decision),
      onAuditDropped: (s) => summaries.push(s),
    });
    const secret = {
      sessionId: "s1",
      time: "2026-12-07T12:00:00.000Z",
      secrets: ["T"],
      decision: "refuse" as const,
      reason: "unbound" as const,
      host: "evil.test",
      port: 443,
      method: "GET",
      path: "/",
    };
    // A flood of connections first: it does not use up the secret records' bound.
    for (let i = 0; i < 5; i++) audit.connection(record("deny"));
    for (let i = 0; i < 5; i++) audit.secret(secret);
    audit.flush();
    expect(connections).toEqual(["deny", "deny", "deny"]);
    expect(secrets).toEqual(["refuse", "refuse", "refuse"]);
    expect(summaries).toEqual([
      expect.objectContaining({ dropped: 2, decisions: { deny: 2 }, reason: "rate-limit" }),
      expect.objectContaining({ dropped: 2, decisions: { refuse: 2 }, reason: "rate-limit" }),
    ]);
  });
});
