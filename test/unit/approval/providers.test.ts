import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import {
  NonInteractiveApproval,
  ProgrammaticApproval,
  parseAnswer,
  TerminalApproval,
} from "../../../src/approval/index.js";
import { NotFoundError } from "../../../src/errors.js";
import type { Decision } from "../../../src/policy/types.js";

const decision: Decision = {
  decision: "ask",
  ruleId: "ask-net",
  reason: "network access",
  layer: "operator",
  part: "curl x",
  trail: [],
};

const request = (signal = new AbortController().signal) => ({
  tool: "bash",
  args: { command: "curl x" },
  decision,
  signal,
});

/** A terminal approval on in-memory streams: `input` to type into, `shown()` what it printed so far. */
function terminalPrompt() {
  const input = new PassThrough();
  const output = new PassThrough();
  let printed = "";
  output.on("data", (c: Buffer) => {
    printed += c.toString();
  });
  return { input, p: new TerminalApproval({ input, output }), shown: () => printed };
}

describe("approval providers", () => {
  it("non-interactive answers deny and says it asks nobody", async () => {
    const p = new NonInteractiveApproval();
    expect(p.interactive).toBe(false);
    expect(await p.request()).toBe("deny");
  });

  it("terminal: shows tool, arguments and rule, and reads the answer", async () => {
    const { input, p, shown } = terminalPrompt();
    const answer = p.request(request());
    setTimeout(() => input.write("s\n"), 10);
    expect(await answer).toBe("allow-session");
    expect(shown()).toContain('Tool call needs approval: bash {"command":"curl x"}');
    expect(shown()).toContain("asked by rule 'ask-net' (operator) for 'curl x': network access");
    expect(shown()).toContain(
      "\nAllow? Type o (once), s (this exact call, for the rest of the session) or d (deny), then press Enter; Enter alone denies: -> allowed for the rest of the session\n",
    );
  });

  it("terminal: says what an answer that is not o or s did (denied), and that Enter alone denies", async () => {
    const { input, p, shown } = terminalPrompt();
    const typo = p.request(request());
    setTimeout(() => input.write("a\n"), 10);
    expect(await typo).toBe("deny");
    expect(shown().split("\n").at(-2)).toBe(
      "Allow? Type o (once), s (this exact call, for the rest of the session) or d (deny), then press Enter; Enter alone denies: -> denied ('a' is not o or s)",
    );
    const enter = p.request(request());
    setTimeout(() => input.write("\n"), 10);
    expect(await enter).toBe("deny");
    expect(shown().endsWith("Enter alone denies: -> denied\n")).toBe(true);
  });

  it("terminal: an aborted request (timeout) answers deny", async () => {
    const p = new TerminalApproval({ input: new PassThrough(), output: new PassThrough() });
    const controller = new AbortController();
    const answer = p.request(request(controller.signal));
    setTimeout(() => controller.abort(), 10);
    expect(await answer).toBe("deny");
  });

  it("parseAnswer: once, session, anything else deny", () => {
    expect(parseAnswer("o")).toBe("allow-once");
    expect(parseAnswer(" Session ")).toBe("allow-session");
    expect(parseAnswer("")).toBe("deny");
    expect(parseAnswer("whatever")).toBe("deny");
  });

  it("programmatic: lists pending requests by owner / tenant and answers by id", async () => {
    const p = new ProgrammaticApproval();
    const a = p.request({ ...request(), owner: "alice", tenant: "t1", sessionId: "s1" });
    const b = p.request({ ...request(), owner: "bob", tenant: "t2", sessionId: "s2" });
    expect(p.pending()).toHaveLength(2);
    const [mine] = p.pending({ owner: "alice" });
    expect(mine).toMatchObject({ tool: "bash", owner: "alice", tenant: "t1", sessionId: "s1", decision });
    p.answer(mine?.id ?? "", "allow-once");
    expect(await a).toBe("allow-once");
    expect(p.pending({ tenant: "t2" })).toHaveLength(1);
    expect(() => p.answer(mine?.id ?? "", "deny")).toThrow(NotFoundError);
    p.answer(p.pending()[0]?.id ?? "", "deny");
    expect(await b).toBe("deny");
  });

  it("programmatic: onRequest listeners see each new request until they stop", async () => {
    const p = new ProgrammaticApproval();
    const seen: string[] = [];
    const stop = p.onRequest((item) => seen.push(`${item.toolCallId}@${item.sessionId}`));
    const first = p.request({ ...request(), toolCallId: "c1", sessionId: "s1" });
    stop();
    const second = p.request({ ...request(), toolCallId: "c2", sessionId: "s1" });
    expect(seen).toEqual(["c1@s1"]);
    for (const item of p.pending()) p.answer(item.id, "deny");
    expect([await first, await second]).toEqual(["deny", "deny"]);
  });

  it("programmatic: an aborted request leaves the list and answers deny", async () => {
    const p = new ProgrammaticApproval();
    const controller = new AbortController();
    const answer = p.request(request(controller.signal));
    controller.abort();
    expect(await answer).toBe("deny");
    expect(p.pending()).toEqual([]);
  });
});
