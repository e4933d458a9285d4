/**
 * The `ask` path of the egress gateway without an engine: the relay protocol (questions and
 * answers on the gateway's stdio), AskRelay's answers (approver, session memory, timeout, close),
 * the squid.conf lines of an ask rule, and the audit records of asked connections.
 */
import { describe, expect, it } from "vitest";
import {
  AskRelay,
  formatAskAnswer,
  type NetworkApprovalRequest,
  type NetworkRule,
  parseAccessLine,
  parseAskQuestion,
  squidConfig,
} from "../../../src/egress/index.js";

const rules: NetworkRule[] = [
  { host: "pypi.org", ports: [443], decision: "allow" },
  { host: "ask.example", ports: [80, 443], decision: "ask" },
  { host: "*.ask.example", ports: [443], decision: "ask" },
];

describe("relay protocol", () => {
  it("parses a question line into id, host (lower case) and port", () => {
    expect(parseAskQuestion("WARDEN-ASK q3a9f01b2c3d4e5f6a7 a.test 443")?.id).toBe("q3a9f01b2c3d4e5f6a7");
    expect(parseAskQuestion("WARDEN-ASK q12 Ask.Example 443")).toEqual({
      id: "q12",
      host: "ask.example",
      port: 443,
    });
    expect(parseAskQuestion("WARDEN-ASK q1 [fd00::1] 80\n")).toEqual({
      id: "q1",
      host: "[fd00::1]",
      port: 80,
    });
    expect(parseAskQuestion("WARDEN-ASK q2 ask.example 443 40112")).toEqual({
      id: "q2",
      host: "ask.example",
      port: 443,
      clientPort: 40112,
    });
  });

  it("takes no other line for a question: audit lines, bad ids, ports, hosts or extra fields", () => {
    for (const line of [
      "WARDEN-AUDIT 1796123438.763 GET pypi.org 443 TCP_MISS/200 1 2 3 - - - -",
      "WARDEN-ASK 12 ask.example 443",
      "WARDEN-ASK q1 ask.example 0",
      "WARDEN-ASK q1 ask.example 65536",
      "WARDEN-ASK q1 ask example 443",
      "WARDEN-ASK q1 ask.example 443 extra",
      "WARDEN-ASK q1 a%0Ab 443",
    ])
      expect(parseAskQuestion(line)).toBeNull();
  });

  it("writes OK for allowing outcomes and ERR for the others, with the outcome", () => {
    expect(formatAskAnswer("q3", "once")).toBe("WARDEN-ANSWER q3 OK once\n");
    expect(formatAskAnswer("q3", "session")).toBe("WARDEN-ANSWER q3 OK session\n");
    expect(formatAskAnswer("q3", "cached")).toBe("WARDEN-ANSWER q3 OK cached\n");
    expect(formatAskAnswer("q3", "denied")).toBe("WARDEN-ANSWER q3 ERR denied\n");
    expect(formatAskAnswer("q3", "timeout")).toBe("WARDEN-ANSWER q3 ERR timeout\n");
  });
});

/** A relay whose answers are collected, with an approver that answers from `answers`. */
function relayWith(answers: Array<"allow-once" | "allow-session" | "deny" | "never">, timeoutMs = 5_000) {
  const written: string[] = [];
  const asked: Omit<NetworkApprovalRequest, "signal">[] = [];
  const signals: AbortSignal[] = [];
  const relay = new AskRelay({
    sessionId: "s1",
    rules,
    timeoutMs,
    write: (l) => written.push(l),
    approve: ({ signal, ...req }) => {
      asked.push(req);
      signals.push(signal);
      const answer = answers.shift() ?? "deny";
      return answer === "never" ? new Promise(() => {}) : Promise.resolve(answer);
    },
  });
  return { relay, written, asked, signals };
}

describe("AskRelay", () => {
  it("asks the approver with session, host, port and rule, and answers what it said", async () => {
    const { relay, written, asked } = relayWith(["allow-once", "deny"]);
    expect(await relay.answer({ id: "q1", host: "ask.example", port: 443 })).toBe("once");
    expect(await relay.answer({ id: "q2", host: "ask.example", port: 443 })).toBe("denied");
    expect(asked).toEqual([
      { sessionId: "s1", host: "ask.example", port: 443, rule: "ask ask.example:80+443" },
      { sessionId: "s1", host: "ask.example", port: 443, rule: "ask ask.example:80+443" },
    ]);
    expect(written).toEqual(["WARDEN-ANSWER q1 OK once\n", "WARDEN-ANSWER q2 ERR denied\n"]);
  });

  it("remembers allow-session for exactly that host and port; another port or host asks again", async () => {
    const { relay, written, asked } = relayWith(["allow-session", "deny", "allow-once"]);
    expect(await relay.answer({ id: "q1", host: "ask.example", port: 443 })).toBe("session");
    expect(await relay.answer({ id: "q2", host: "ask.example", port: 443 })).toBe("cached");
    expect(await relay.answer({ id: "q3", host: "ask.example", port: 80 })).toBe("denied");
    expect(await relay.answer({ id: "q4", host: "a.ask.example", port: 443 })).toBe("once");
    expect(asked.map((a) => `${a.host}:${a.port} ${a.rule}`)).toEqual([
      "ask.example:443 ask ask.example:80+443",
      "ask.example:80 ask ask.example:80+443",
      "a.ask.example:443 ask *.ask.example:443",
    ]);
    expect(written[1]).toBe("WARDEN-ANSWER q2 OK cached\n");
  });

  it("answers a TLS tunnel's second check (same client port, host and port) without asking again", async () => {
    const { relay, asked } = relayWith(["allow-once", "allow-once"]);
    expect(await relay.answer({ id: "q1", host: "ask.example", port: 443, clientPort: 40112 })).toBe("once");
    expect(await relay.answer({ id: "q2", host: "ask.example", port: 443, clientPort: 40112 })).toBe("once");
    expect(asked).toHaveLength(1);
    // Another connection (client port) asks again.
    expect(await relay.answer({ id: "q3", host: "ask.example", port: 443, clientPort: 40113 })).toBe("once");
    expect(asked).toHaveLength(2);
  });

  it("answers timeout after timeoutMs and aborts the approver's request", async () => {
    const { relay, written, signals } = relayWith(["never"], 120);
    const started = performance.now();
    expect(await relay.answer({ id: "q1", host: "ask.example", port: 80 })).toBe("timeout");
    expect(performance.now() - started).toBeGreaterThanOrEqual(115);
    expect(signals[0]?.aborted).toBe(true);
    expect(written).toEqual(["WARDEN-ANSWER q1 ERR timeout\n"]);
  });

  it("answers non-interactive without an approver, and closed once the session ends", async () => {
    const written: string[] = [];
    const relay = new AskRelay({ sessionId: "s1", rules, write: (l) => written.push(l) });
    expect(relay.timeoutMs).toBe(300_000);
    expect(await relay.answer({ id: "q1", host: "ask.example", port: 443 })).toBe("non-interactive");
    const waiting = relayWith(["never"]);
    const pending = waiting.relay.answer({ id: "q7", host: "ask.example", port: 443 });
    waiting.relay.close();
    expect(await pending).toBe("closed");
    expect(waiting.signals[0]?.aborted).toBe(true);
    expect(waiting.written).toEqual(["WARDEN-ANSWER q7 ERR closed\n"]);
    expect(written).toEqual(["WARDEN-ANSWER q1 ERR non-interactive\n"]);
  });

  it("refuses a question about a host no ask rule covers, without asking", async () => {
    const { relay, asked } = relayWith(["allow-once"]);
    expect(await relay.answer({ id: "q1", host: "pypi.org", port: 443 })).toBe("bad-question");
    expect(await relay.answer({ id: "q2", host: "other.example", port: 443 })).toBe("bad-question");
    expect(asked).toEqual([]);
  });

  it("handles question lines and leaves every other line to the access-log parser", async () => {
    const { relay, written } = relayWith(["allow-once"]);
    expect(relay.handle("WARDEN-AUDIT 1 GET a 80 TCP_MISS/200 1 2 3 - - - -")).toBe(false);
    expect(relay.handle("WARDEN-ASK q9 ask.example 80")).toBe(true);
    await expect.poll(() => written).toEqual(["WARDEN-ANSWER q9 OK once\n"]);
  });
});

describe("squid.conf of ask rules", () => {
  const conf = squidConfig({
    rules,
    refusedCidrs: ["10.0.0.0/8"],
    clientCidrs: ["172.30.0.0/16"],
    port: 3128,
    askHelper: true,
    upstreamCa: false,
  });
  const access = conf.split("\n").filter((l) => l.startsWith("http_access"));

  it("asks the relay helper only for a listed name and port that resolves to no refused address", () => {
    expect(conf).toContain(
      "external_acl_type ask_approval ttl=0 negative_ttl=0 children-max=1 children-startup=1 concurrency=64 queue-size=1024 %DST %>rP %SRCPORT /usr/local/bin/warden-ask /run/gw/ask.sock",
    );
    expect(conf).toContain("acl r1_approved external ask_approval");
    expect(access.slice(0, 4)).toEqual([
      "http_access deny !session_net",
      "http_access deny https_scheme !host_matches_sni",
      "http_access deny r1_host r1_port !refused_dst !https_scheme !r1_approved",
      "http_access deny r2_host r2_port !refused_dst !https_scheme !r2_approved",
    ]);
    expect(access).toContain("http_access allow CONNECT r1_host r1_port !refused_dst");
  });

  it("logs the ask helper's outcome note as the audit line's last field", () => {
    expect(conf).toContain(
      "logformat warden WARDEN-AUDIT %ts.%03tu %rm %>rd %>rP %Ss/%>Hs %>st %<st %tr %#ssl::>sni %<a %ssl::bump_mode %{warden_ask}note",
    );
  });
});

describe("audit records of asked connections", () => {
  const line = (rest: string) => `WARDEN-AUDIT 1796123438.763 ${rest}`;
  const parse = (rest: string) => parseAccessLine(line(rest), "s1", rules, 1500);

  it("records ask→allow with the outcome for a connection the approver let through", () => {
    expect(parse("GET ask.example 80 TCP_MISS/200 140 245 19 - 203.0.113.66 - once")).toMatchObject({
      decision: "ask→allow",
      ask: "once",
      rule: "ask ask.example:80+443",
      remoteAddress: "203.0.113.66",
    });
    expect(
      parse("CONNECT ask.example 443 TCP_TUNNEL/200 740 2148 21 ask.example 203.0.113.66 splice cached"),
    ).toMatchObject({ decision: "ask→allow", ask: "cached", rule: "ask ask.example:80+443" });
    // A tunnel checked twice carries both answers' notes.
    expect(
      parse("CONNECT ask.example 443 TCP_TUNNEL/200 740 2148 21 ask.example 203.0.113.66 splice once,once"),
    ).toMatchObject({ decision: "ask→allow", ask: "once" });
  });

  it("records ask→deny with why: the approver, the timeout in ms, nobody to ask, the gateway", () => {
    const refusal = (outcome: string) => {
      const r = parse(`CONNECT ask.example 443 TCP_DENIED/403 37 0 9 ask.example - - ${outcome}`);
      return [r?.decision, r?.ask, r?.rule];
    };
    expect(["denied", "timeout", "non-interactive", "no-controller"].map(refusal)).toEqual([
      ["ask→deny", "denied", "ask ask.example:80+443 (denied by the approver)"],
      ["ask→deny", "timeout", "ask ask.example:80+443 (no answer within 1500 ms)"],
      ["ask→deny", "non-interactive", "ask ask.example:80+443 (nobody to ask: non-interactive)"],
      ["ask→deny", "no-controller", "ask ask.example:80+443 (not approved: no-controller)"],
    ]);
  });

  it("names an approved tunnel whose SNI names another host an SNI mismatch", () => {
    expect(parse("CONNECT ask.example 443 NONE_NONE/200 61 0 20 other.test - terminate once")).toMatchObject({
      decision: "deny",
      ask: "once",
      rule: "sni-mismatch (ask ask.example:80+443)",
    });
  });
});
