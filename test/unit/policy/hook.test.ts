import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createAuditLog, digestArgs } from "../../../src/audit/index.js";
import type { BeforeToolCallContext } from "../../../src/pipeline/types.js";
import type { ApprovalProvider, ApprovalRequest } from "../../../src/policy/index.js";
import {
  createPolicyHook,
  createPolicyHookFromFiles,
  type Policy,
  parsePolicyText,
} from "../../../src/policy/index.js";
import type { AnyTool } from "../../../src/tools/types.js";
import { FakeSandbox } from "../../helpers/fake-sandbox.js";

const policy: Policy = {
  layers: [
    parsePolicyText(
      `
default: ask
rules:
  - { id: allow-ls, decision: allow, tools: [bash], commands: [ls] }
  - { id: deny-rm, decision: deny, tools: [bash], commands: [rm], reason: deleting is not allowed }
`,
      "test.yaml",
    ),
  ],
};

function context(command: string, realpaths: string[] = []): BeforeToolCallContext {
  // git's configuration is read through stat + readFile (git-config.ts): an empty sandbox.
  const sandbox = new FakeSandbox();
  const resolve = sandbox.realpath.bind(sandbox);
  sandbox.realpath = (path) => {
    realpaths.push(path);
    return resolve(path);
  };
  return {
    call: { id: "call-1", name: "bash", arguments: { command } },
    tool: { name: "bash" } as AnyTool,
    args: { command },
    sandbox,
    sessionId: "s1",
  };
}

class ScriptedApproval implements ApprovalProvider {
  readonly requests: ApprovalRequest[] = [];
  constructor(private readonly answer: "allow-once" | "allow-session" | "deny" | "never") {}
  request(req: ApprovalRequest) {
    this.requests.push(req);
    if (this.answer === "never") {
      return new Promise<"deny">((resolve) => req.signal.addEventListener("abort", () => resolve("deny")));
    }
    return Promise.resolve(this.answer);
  }
}

function auditFile(): { path: string; lines: () => Record<string, unknown>[] } {
  const path = join(mkdtempSync(join(tmpdir(), "warden-audit-")), "audit.jsonl");
  return {
    path,
    lines: () =>
      readFileSync(path, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

describe("createPolicyHook", () => {
  it("allows what the policy allows, with an audit line naming the rule", async () => {
    const log = auditFile();
    const hook = createPolicyHook({ policy, sessionId: "s1", audit: createAuditLog(log.path) });
    expect(await hook(context("ls -la"))).toBeUndefined();
    const [line] = log.lines();
    expect(line).toMatchObject({
      session: "s1",
      tool: "bash",
      toolCallId: "call-1",
      argsDigest: digestArgs({ command: "ls -la" }),
      decision: "allow",
      ruleId: "allow-ls",
      decider: "policy",
      msg: "policy decision",
    });
    expect(typeof line?.time).toBe("number");
    expect(typeof line?.latencyMs).toBe("number");
    expect(JSON.stringify(line)).not.toContain("ls -la");
  });

  it("blocks a denied call with a reason naming the part and the rule", async () => {
    const approval = new ScriptedApproval("allow-once");
    const hook = createPolicyHook({ policy, sessionId: "s1", approval });
    expect(await hook(context("ls && rm -rf src"))).toEqual({
      block: true,
      reason:
        "Tool call refused: bash part 'rm -rf src' is denied by rule 'deny-rm' (operator policy): deleting is not allowed. Nothing was run.",
    });
    expect(approval.requests).toHaveLength(0);
  });

  it("asks the approver; allow-once allows once, deny blocks", async () => {
    const once = new ScriptedApproval("allow-once");
    const hook = createPolicyHook({ policy, sessionId: "s1", approval: once, owner: "alice", tenant: "t1" });
    expect(await hook(context("make"))).toBeUndefined();
    expect(await hook(context("make"))).toBeUndefined();
    expect(once.requests).toHaveLength(2);
    expect(once.requests[0]).toMatchObject({ tool: "bash", owner: "alice", tenant: "t1", sessionId: "s1" });
    expect(once.requests[0]?.decision).toMatchObject({ decision: "ask", ruleId: "default", part: "make" });

    const log = auditFile();
    const no = createPolicyHook({
      policy,
      sessionId: "s1",
      approval: new ScriptedApproval("deny"),
      audit: createAuditLog(log.path),
    });
    expect(await no(context("make"))).toEqual({
      block: true,
      reason:
        "Tool call refused: bash part 'make' needs approval (rule 'default' (operator policy)) and the approver denied it. Nothing was run.",
    });
    expect(log.lines()[0]).toMatchObject({ decision: "deny", decider: "user", ruleId: "default" });
  });

  it("allow-session remembers the approved parts for the rest of the session", async () => {
    const approval = new ScriptedApproval("allow-session");
    const hook = createPolicyHook({ policy, sessionId: "s1", approval });
    expect(await hook(context("make build"))).toBeUndefined();
    expect(await hook(context("make build && ls"))).toBeUndefined();
    expect(approval.requests).toHaveLength(1);
    expect(await hook(context("make test"))).toBeUndefined();
    expect(approval.requests).toHaveLength(2);
    const long = "x".repeat(100);
    await hook(context(`eval "${long}a"`));
    await hook(context(`eval "${long}b"`));
    expect(approval.requests).toHaveLength(4);
  });

  it("a timeout means deny (decider timeout)", async () => {
    const log = auditFile();
    const hook = createPolicyHook({
      policy,
      sessionId: "s1",
      approval: new ScriptedApproval("never"),
      approvalTimeoutMs: 20,
      audit: createAuditLog(log.path),
    });
    const result = await hook(context("make"));
    expect(result).toMatchObject({ block: true });
    expect((result as { reason: string }).reason).toContain("no answer came in time");
    expect(log.lines()[0]).toMatchObject({ decision: "deny", decider: "timeout" });
  });

  it("without an approver, ask means deny (decider non-interactive)", async () => {
    const log = auditFile();
    const hook = createPolicyHook({ policy, sessionId: "s1", audit: createAuditLog(log.path) });
    const result = await hook(context("ls | sh"));
    expect((result as { reason: string }).reason).toBe(
      "Tool call refused: bash part 'sh' needs approval (sh reads commands from stdin) and this session is non-interactive, so it is denied. Nothing was run.",
    );
    expect(log.lines()[0]).toMatchObject({ decision: "deny", decider: "non-interactive" });
  });

  it("resolves redirect targets through the sandbox", async () => {
    const seen: string[] = [];
    const hook = createPolicyHook({ policy, sessionId: "s1" });
    await hook(context("ls > out.txt 2>/dev/null", seen));
    expect(seen).toEqual(["/workspace/out.txt", "/dev/null"]);
  });

  it("fails closed, with an audit line, when a path cannot be resolved", async () => {
    const log = auditFile();
    const hook = createPolicyHook({ policy, sessionId: "s1", audit: createAuditLog(log.path) });
    const ctx = context("ls > out.txt");
    const gone = new FakeSandbox();
    gone.realpath = () => Promise.reject(new Error("container gone"));
    const broken = { ...ctx, sandbox: gone };
    expect(await hook(broken)).toEqual({
      block: true,
      reason: "Tool call refused: the policy could not be evaluated (container gone). Nothing was run.",
    });
    expect(log.lines()[0]).toMatchObject({ decision: "deny", decider: "policy" });
  });

  it("createPolicyHookFromFiles loads the shipped default policy", async () => {
    const file = new URL("../../../policies/default.yaml", import.meta.url).pathname;
    const hook = await createPolicyHookFromFiles([file], { sessionId: "s1", nonInteractive: true });
    const result = await hook(context("git status && rm -rf src"));
    expect((result as { reason: string }).reason).toContain("rule 'deny-rm'");
    expect(await hook(context("git status"))).toBeUndefined();
  });
});
