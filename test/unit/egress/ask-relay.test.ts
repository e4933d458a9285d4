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
  parseAskQuestion,
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
    expect(parseAskQuestion("WARDEN-ASK q2 ask.example 443 18446744073709551615")).toEqual({
      id: "q2",
      host: "ask.example",
      port: 443,
      connection: "18446744073709551615",
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

  it("answers a second request on the same connection (the gateway's id), host and port without asking again", async () => {
    const { relay, asked } = relayWith(["allow-once", "allow-once"]);
    expect(await relay.answer({ id: "q1", host: "ask.example", port: 443, connection: "40112" })).toBe(
      "once",
    );
    expect(await relay.answer({ id: "q2", host: "ask.example", port: 443, connection: "40112" })).toBe(
      "once",
    );
    expect(asked).toHaveLength(1);
    // Another connection asks again.
    expect(await relay.answer({ id: "q3", host: "ask.example", port: 443, connection: "40113" })).toBe(
      "once",
    );
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

  it("handles question lines and leaves every other line to the record parser", async () => {
    const { relay, written } = relayWith(["allow-once"]);
    expect(relay.handle('WARDEN-CONN {"time":1,"method":"GET","host":"a","port":80}')).toBe(false);
    expect(relay.handle("WARDEN-ASK q9 ask.example 80")).toBe(true);
    await expect.poll(() => written).toEqual(["WARDEN-ANSWER q9 OK once\n"]);
  });
});
