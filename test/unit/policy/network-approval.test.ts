/**
 * networkApprover: a session's approval provider as the approver of its `ask` network rules. The
 * request every provider sees names the session, host, port and rule; a provider that cannot ask
 * (now) answers non-interactive, and no provider means no approver (the gateway refuses alike).
 */
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import {
  describeRequest,
  NonInteractiveApproval,
  ProgrammaticApproval,
  TerminalApproval,
} from "../../../src/approval/index.js";
import { networkApprovalRequest, networkApprover } from "../../../src/policy/index.js";

const request = (signal = new AbortController().signal) => ({
  sessionId: "s1",
  host: "pypi.org",
  port: 443,
  rule: "ask pypi.org:443",
  signal,
});

describe("networkApprover", () => {
  it("gives no approver without a provider", () => {
    expect(networkApprover(undefined)).toBeUndefined();
  });

  it("answers non-interactive, asking nobody, while the provider cannot ask (read per connection)", async () => {
    expect(await networkApprover(new NonInteractiveApproval())?.(request())).toBe("non-interactive");
    // An MCP client declares elicitation only after the session's gateway exists.
    const provider = new ProgrammaticApproval();
    let interactive = false;
    Object.defineProperty(provider, "interactive", { get: () => interactive });
    const approve = networkApprover(provider);
    expect(await approve?.(request())).toBe("non-interactive");
    expect(provider.pending()).toEqual([]);
    interactive = true;
    const answer = approve?.(request());
    provider.answer(provider.pending()[0]?.id ?? "", "allow-once");
    expect(await answer).toBe("allow-once");
  });

  it("puts the connection in the programmatic provider's pending list and returns its answer", async () => {
    const provider = new ProgrammaticApproval();
    const approve = networkApprover(provider, { tenant: "t1", owner: "t1" });
    const answer = approve?.(request());
    const [pending] = provider.pending({ tenant: "t1" });
    expect(pending && { ...pending, id: "", createdAt: 0 }).toEqual({
      id: "",
      tool: "network",
      args: { host: "pypi.org", port: 443 },
      decision: {
        decision: "ask",
        ruleId: "ask pypi.org:443",
        part: "pypi.org:443",
        reason: "the sandbox connects to pypi.org:443",
        trail: [],
      },
      sessionId: "s1",
      owner: "t1",
      tenant: "t1",
      network: { host: "pypi.org", port: 443, rule: "ask pypi.org:443" },
      createdAt: 0,
    });
    provider.answer(pending?.id ?? "", "allow-session");
    expect(await answer).toBe("allow-session");
  });

  it("answers deny without asking once the request is aborted", async () => {
    const provider = new ProgrammaticApproval();
    const controller = new AbortController();
    controller.abort();
    expect(await networkApprover(provider)?.(request(controller.signal))).toBe("deny");
    expect(provider.pending()).toEqual([]);
  });
});

describe("describeRequest of a network connection", () => {
  it("names the session, host, port and rule", () => {
    expect(describeRequest(networkApprovalRequest(request()))).toBe(
      "Network connection needs approval: session s1 connects to pypi.org:443\n  asked by rule 'ask pypi.org:443'",
    );
  });
});

describe("the terminal prompt of a network connection (warden run)", () => {
  it("shows session, host, port and rule, offers this host and port for the session, and takes the answer", async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    let shown = "";
    output.on("data", (c: Buffer) => {
      shown += c.toString();
    });
    const approve = networkApprover(new TerminalApproval({ input, output }));
    const answer = approve?.(request());
    setTimeout(() => input.write("s\n"), 10);
    expect(await answer).toBe("allow-session");
    expect(shown).toBe(
      "Network connection needs approval: session s1 connects to pypi.org:443\n  asked by rule 'ask pypi.org:443'\n" +
        "Allow? Type o (once), s (this host and port, for the rest of the session) or d (deny), then press Enter; Enter alone denies: " +
        "-> allowed for the rest of the session\n",
    );
  });
});
