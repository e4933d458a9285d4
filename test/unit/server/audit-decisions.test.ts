/**
 * The audit line of every call names the decision and rule of that very call: the server runs the
 * real pipeline with the tenant's real policy hook (over a fake sandbox), and the decision travels with
 * each call, so calls that reuse an id in concurrent batches of one session keep their own lines.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type AuditEntry, createMemoryAuditLog } from "../../../src/server/audit.js";
import { type RunningServer, startServer } from "../../../src/server/server.js";
import { createPolicyHookFactory } from "../../../src/server/sessions/policy-hooks.js";
import type { SessionFactory } from "../../../src/server/sessions/session-factory.js";
import { openSession } from "../../../src/session/open-session.js";
import type { Session, SessionOptions } from "../../../src/session/types.js";
import type { AnyTool } from "../../../src/tools/types.js";
import { FakeSandbox } from "../../helpers/fake-sandbox.js";
import { echoTool, fakeSpill } from "../../helpers/pipeline-fakes.js";
import { auth, fakeSandboxBackend, tenant, testConfig } from "../../helpers/server-fakes.js";

const POLICY = [
  "default: deny",
  "rules:",
  "  - id: allow-echo",
  "    decision: allow",
  "    tools: [echo]",
  "  - id: allow-hold",
  "    decision: allow",
  "    tools: [hold]",
  "  - id: deny-shout",
  "    decision: deny",
  "    tools: [shout]",
  "    reason: no shouting",
  "",
].join("\n");

/** A `hold` tool that runs until `release()`; `holding` counts calls waiting. */
function holdTool(): { tool: AnyTool; release: () => void; holding: () => number } {
  let waiting: (() => void)[] = [];
  const tool = echoTool({
    name: "hold",
    execute: async () => {
      await new Promise<void>((resolve) => waiting.push(resolve));
      return { content: [{ type: "text", text: "held" }] };
    },
  });
  const release = () => {
    for (const resolve of waiting) resolve();
    waiting = [];
  };
  return { tool, release, holding: () => waiting.length };
}

/** Sessions on the real pipeline (hooks included) over the pipeline tests' fake sandbox. */
class PipelineBackend implements SessionFactory {
  readonly backend = fakeSandboxBackend();
  constructor(private readonly tools: () => AnyTool[]) {}
  create(options: SessionOptions): Promise<Session> {
    return openSession(options, {
      createSandbox: async () => new FakeSandbox(),
      createSpillStore: () => fakeSpill(),
      builtinTools: this.tools,
    });
  }
  async adopt(): Promise<Session | null> {
    return null;
  }
}

type ToolLine = Extract<AuditEntry, { kind: "tool" }>;

describe("warden serve: audit lines of policy decisions", () => {
  let dir: string;
  let server: RunningServer;
  let audit: ReturnType<typeof createMemoryAuditLog>;
  let hold: ReturnType<typeof holdTool>;
  let sid: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "warden-audit-decisions-"));
    await writeFile(join(dir, "policy.yaml"), POLICY);
    hold = holdTool();
    audit = createMemoryAuditLog();
    const config = testConfig(join(dir, "state"), [tenant("alpha", { policy: [join(dir, "policy.yaml")] })]);
    const backend = new PipelineBackend(() => [
      echoTool(),
      echoTool({ name: "shout" }),
      echoTool({ name: "whisper" }),
      hold.tool,
    ]);
    server = await startServer({
      config,
      backend: backend.backend,
      sessions: backend,
      audit,
      hooks: await createPolicyHookFactory(config),
      listen: false,
    });
    sid = (await postAsAlpha("/v1/sessions", {})).json().id;
  });

  afterEach(async () => {
    hold.release();
    await server.shutdown(0);
    await rm(dir, { recursive: true, force: true });
  });

  const postAsAlpha = (url: string, payload: object, accept = "application/json") =>
    server.app.inject({ method: "POST", url, headers: { ...auth("alpha"), accept }, payload });
  const post = (toolCalls: { id: string; name: string; arguments: unknown }[], accept?: string) =>
    postAsAlpha(`/v1/sessions/${sid}/tool-calls`, { toolCalls }, accept);
  const toolLines = () =>
    audit.entries
      .filter((e): e is ToolLine => e.kind === "tool")
      .map((e) => [e.toolCallId, e.tool, e.decision, e.rule, e.decider, e.isError]);

  it("names the exact decision, rule and decider of each call of a batch", async () => {
    const res = await post([
      { id: "a", name: "echo", arguments: { text: "hi" } },
      { id: "b", name: "shout", arguments: { text: "HI" } },
      { id: "c", name: "whisper", arguments: { text: "hi" } },
    ]);
    expect(res.statusCode).toBe(200);
    expect(toolLines().sort()).toEqual([
      ["a", "echo", "allow", "allow-echo", "policy", false],
      ["b", "shout", "deny", "deny-shout", "policy", true],
      ["c", "whisper", "deny", "default", "policy", true],
    ]);
  });

  it("keeps the decision out of the streamed end event (Pi's shape), and in the audit line", async () => {
    const res = await post([{ id: "a", name: "echo", arguments: { text: "hi" } }], "text/event-stream");
    const end = res.body.split("\n\n").find((block) => block.startsWith("event: tool_execution_end"));
    const data = JSON.parse(/^data: (.*)$/m.exec(end ?? "")?.[1] ?? "null") as Record<string, unknown>;
    expect(Object.keys(data).sort()).toEqual(["result", "toolCallId", "toolName", "type"]);
    expect(toolLines()).toEqual([["a", "echo", "allow", "allow-echo", "policy", false]]);
  });

  it("keeps each call's own decision when concurrent batches of one session reuse a tool-call id", async () => {
    const first = post([{ id: "call_0", name: "hold", arguments: { text: "x" } }]);
    await expect.poll(() => hold.holding()).toBe(1);
    const second = await post([{ id: "call_0", name: "shout", arguments: { text: "X" } }]);
    expect(second.statusCode).toBe(200);
    hold.release();
    expect((await first).statusCode).toBe(200);
    expect(toolLines()).toEqual([
      ["call_0", "shout", "deny", "deny-shout", "policy", true],
      ["call_0", "hold", "allow", "allow-hold", "policy", false],
    ]);
  });
});
