/**
 * The gateway's connection records (`WARDEN-CONN <json>`, images/gateway/record.go) as audit
 * records (src/egress/connection-records.ts), and the decisions the controller and the gateway share
 * (test/fixtures/host-decisions.json, also read by images/gateway/rules_test.go).
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { gatewayContainerConfig } from "../../../src/egress/gateway-container.js";
import { decideConnection, gatewayConfig, parseConnectionLine } from "../../../src/egress/index.js";
import type { NetworkRule } from "../../../src/egress/types.js";

const corpus = JSON.parse(
  readFileSync(new URL("../../fixtures/host-decisions.json", import.meta.url), "utf8"),
) as {
  rules: NetworkRule[];
  cases: Array<{ host: string; port: number; decision: string }>;
};
const rules = corpus.rules;
const line = (fields: Record<string, unknown>) =>
  `WARDEN-CONN ${JSON.stringify({ time: 1796123438763, status: 200, bytesOut: 140, bytesIn: 245, durationMs: 19, ...fields })}`;
const parse = (fields: Record<string, unknown>) => parseConnectionLine(line(fields), "s1", rules, 1500);

describe("the rules' decisions", () => {
  it("are the corpus's, which the gateway's Go test checks too", () => {
    expect(corpus.cases.map((c) => decideConnection(rules, c.host, c.port).decision)).toEqual(
      corpus.cases.map((c) => c.decision),
    );
  });
});

describe("the gateway's config", () => {
  it("carries the rules, ranges, clients, secret headers, extra CAs and the ask deadline as the gateway reads them", () => {
    expect(
      gatewayConfig({
        rules: [{ host: "pypi.org", ports: [443], decision: "allow", source: "--allow-net entry 1" }],
        refusedCidrs: ["10.0.0.0/8"],
        clientCidrs: ["172.30.0.0/24"],
        port: 3128,
        secretHeaders: ["authorization"],
        askDeadlineMs: 310_000,
      }),
    ).toEqual({
      port: 3128,
      rules: [{ host: "pypi.org", ports: [443], decision: "allow" }],
      refusedCidrs: ["10.0.0.0/8"],
      clientCidrs: ["172.30.0.0/24"],
      secretHeaders: ["authorization"],
      upstreamCa: "",
      askDeadlineMs: 310_000,
    });
  });
});

describe("the gateway's container", () => {
  it("gets two CPUs, or the host's one (Docker refuses more CPUs than the host has), and the session network's DNS port", () => {
    const config = gatewayConfig({
      rules: [],
      refusedCidrs: [],
      clientCidrs: [],
      port: 3128,
      askDeadlineMs: 1,
    });
    const body = (hostCpus: number) =>
      gatewayContainerConfig({ image: "i", networkName: "n", config, labels: {}, hostCpus }).HostConfig;
    expect([1, 2, 16].map((n) => body(n)?.NanoCpus)).toEqual([1e9, 2e9, 2e9]);
    expect(body(2)?.Sysctls).toEqual({ "net.ipv4.ip_unprivileged_port_start": "53" });
    expect(body(2)?.Dns).toBeUndefined();
  });
});

describe("connection records", () => {
  it("turns a forwarded plain request and an opened tunnel with a request inside into allow records", () => {
    expect(
      parse({ method: "GET", host: "PyPI.org", port: 443, forwarded: true, remote: "203.0.113.66" }),
    ).toEqual({
      sessionId: "s1",
      time: "2026-12-01T11:10:38.763Z",
      domain: "pypi.org",
      port: 443,
      method: "GET",
      decision: "allow",
      rule: "allow pypi.org:443",
      bytesOut: 140,
      bytesIn: 245,
      durationMs: 19,
      remoteAddress: "203.0.113.66",
    });
    expect(
      parse({ method: "CONNECT", host: "pypi.org", port: 443, sni: "pypi.org", forwarded: true }),
    ).toMatchObject({ method: "CONNECT", decision: "allow", sni: "pypi.org" });
    expect(
      parse({ method: "GET", host: "pypi.org", port: 443, sni: "pypi.org", inside: true, forwarded: true }),
    ).toMatchObject({ decision: "allow", sni: "pypi.org", insideTunnel: true });
  });

  it("names the gateway's own refusals with the rule they overrode, and IP literals", () => {
    const rule = (fields: Record<string, unknown>) =>
      parse({ method: "CONNECT", host: "pypi.org", port: 443, forwarded: false, status: 403, ...fields });
    expect(rule({ refusal: "sni-mismatch", sni: "other.test" })).toMatchObject({
      decision: "deny",
      refusal: "sni-mismatch",
      rule: "sni-mismatch (allow pypi.org:443)",
      sni: "other.test",
    });
    expect(rule({ refusal: "refused-address" })?.rule).toBe("refused-address (allow pypi.org:443)");
    expect(rule({ refusal: "unreachable", status: 502 })?.rule).toBe("unreachable (allow pypi.org:443)");
    expect(rule({ host: "ask.example", refusal: "refused-address" })?.rule).toBe(
      "refused-address (ask ask.example:80+443)",
    );
    expect(
      rule({
        method: "GET",
        host: "other.test",
        inside: true,
        sni: "pypi.org",
        refusal: "host-sni-mismatch",
      }),
    ).toMatchObject({ domain: "other.test", rule: "host-sni-mismatch (not-listed)", insideTunnel: true });
    expect(rule({ host: "203.0.113.66" })).toMatchObject({ rule: "ip-literal", decision: "deny" });
    expect(rule({ host: "[::1]" })).toMatchObject({ domain: "::1", rule: "ip-literal" });
    expect(rule({ host: "other.test" })?.rule).toBe("not-listed");
    // An unknown refusal word is not passed on as one.
    expect(rule({ refusal: "made-up" })).not.toHaveProperty("refusal");
  });

  it("records ask outcomes: ask→allow, and ask→deny with why", () => {
    expect(
      parse({ method: "GET", host: "ask.example", port: 80, forwarded: true, ask: "once" }),
    ).toMatchObject({
      decision: "ask→allow",
      ask: "once",
      rule: "ask ask.example:80+443",
    });
    const refused = (ask: string) => {
      const r = parse({
        method: "CONNECT",
        host: "ask.example",
        port: 443,
        forwarded: false,
        status: 403,
        ask,
      });
      return [r?.decision, r?.rule];
    };
    expect(["denied", "timeout", "non-interactive", "no-controller"].map(refused)).toEqual([
      ["ask→deny", "ask ask.example:80+443 (denied by the approver)"],
      ["ask→deny", "ask ask.example:80+443 (no answer within 1500 ms)"],
      ["ask→deny", "ask ask.example:80+443 (nobody to ask: non-interactive)"],
      ["ask→deny", "ask ask.example:80+443 (not approved: no-controller)"],
    ]);
  });

  it("reads the secret note: names used, or the refusal", () => {
    expect(
      parse({
        method: "GET",
        host: "pypi.org",
        port: 443,
        inside: true,
        forwarded: true,
        secret: "use.GITHUB_TOKEN",
      }),
    ).toMatchObject({ decision: "allow", secrets: ["GITHUB_TOKEN"], rule: "allow pypi.org:443" });
    expect(
      parse({
        method: "GET",
        host: "pypi.org",
        port: 443,
        forwarded: false,
        refusal: "secret",
        secret: "unbound.GITHUB_TOKEN",
      }),
    ).toMatchObject({
      decision: "deny",
      refusal: "secret",
      rule: "secret unbound GITHUB_TOKEN (allow pypi.org:443)",
      secrets: ["GITHUB_TOKEN"],
    });
  });

  it("ignores lines that are not whole records", () => {
    for (const text of [
      "WARDEN-ASK q1 a.test 443",
      "WARDEN-CONN {not json",
      'WARDEN-CONN {"method":"GET","host":"a"}',
      `WARDEN-CONN ${JSON.stringify({ time: "x", method: "GET", host: "a", port: 80, forwarded: true, status: 200, bytesOut: 1, bytesIn: 1, durationMs: 1 })}`,
    ])
      expect(parseConnectionLine(text, "s", rules)).toBeNull();
  });
});
