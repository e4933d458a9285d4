/** The CLI's `warden: net …` stderr line of one connection (src/cli/output/network-lines.ts). */
import { describe, expect, it } from "vitest";
import { connectionLine, droppedLine } from "../../../src/cli/output/network-lines.js";

const base = {
  sessionId: "s1",
  time: "2026-12-01T11:10:38.763Z",
  domain: "ask.test",
  port: 443,
  method: "CONNECT",
  bytesOut: 0,
  bytesIn: 3396,
  durationMs: 11,
};

describe("connectionLine", () => {
  it("names an ask outcome after the target, and nothing for other decisions", () => {
    expect(
      connectionLine({
        ...base,
        decision: "ask→deny",
        ask: "non-interactive",
        rule: "ask ask.test:80+443 (nobody to ask: non-interactive)",
      }),
    ).toBe(
      'warden: net ask→deny CONNECT ask.test:443 ask=non-interactive rule="ask ask.test:80+443 (nobody to ask: non-interactive)" out=0B in=3396B 11ms\n',
    );
    expect(connectionLine({ ...base, decision: "allow", rule: "allow ask.test:443", sni: "ask.test" })).toBe(
      'warden: net allow CONNECT ask.test:443 rule="allow ask.test:443" out=0B in=3396B 11ms\n',
    );
  });
});

describe("a failed TLS connection to the origin", () => {
  it("ends its line with the fix: --net-ca-bundle for a TLS-intercepting network", () => {
    expect(
      connectionLine({
        ...base,
        domain: "pypi.org",
        method: "GET",
        sni: "pypi.org",
        insideTunnel: true,
        decision: "deny",
        rule: "upstream-tls (allow pypi.org:443)",
        refusal: "upstream-tls",
      }),
    ).toBe(
      'warden: net deny GET pypi.org:443 rule="upstream-tls (allow pypi.org:443)" out=0B in=3396B 11ms; the gateway could not make a verified TLS connection to pypi.org: if this network intercepts TLS (a company proxy), pass that proxy\'s CA certificate (PEM) with --net-ca-bundle FILE; otherwise the origin is unreachable or its certificate is invalid\n',
    );
  });
});

describe("droppedLine", () => {
  it("says how many records were not shown, why, and by decision", () => {
    expect(
      droppedLine({
        sessionId: "s1",
        reason: "rate-limit",
        dropped: 1800,
        decisions: { deny: 1799, allow: 1 },
        from: "2026-12-01T10:00:00.000Z",
        to: "2026-12-01T10:00:00.900Z",
        limit: { recordsPerSecond: 10, burst: 200 },
      }),
    ).toBe(
      "warden: net 1800 records not shown (rate-limit: 10/s, burst 200; deny=1799 allow=1) 2026-12-01T10:00:00.000Z..2026-12-01T10:00:00.900Z\n",
    );
  });
});
