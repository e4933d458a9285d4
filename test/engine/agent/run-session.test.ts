/**
 * executeRun on a real session: the real pipeline's validation and lookup errors reach the model, and
 * an abort mid-command removes the container and keeps the changes made so far.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, expect, it } from "vitest";
import { OpenAIChatModel } from "../../../src/agent/model.js";
import { executeRun } from "../../../src/agent/run-session.js";
import { TranscriptWriter } from "../../../src/agent/transcript.js";
import type { AgentEvent } from "../../../src/agent/types.js";
import { createSession, type Session } from "../../../src/session/index.js";
import {
  agentTenant,
  containersOfSession,
  containersOfTenant,
  outDir,
  workspace,
} from "../../helpers/agent-fixture.js";
import { describeEngine } from "../../helpers/engine.js";
import { type OpenAITestServer, startOpenAITestServer } from "../../helpers/openai-test-server.js";

const tenant = agentTenant("session");

describeEngine("executeRun on a real session (engine)", () => {
  let server: OpenAITestServer;
  beforeEach(async () => {
    server = await startOpenAITestServer();
  });
  afterEach(async () => {
    await server.close();
  });
  afterAll(async () => {
    expect(await containersOfTenant(tenant)).toBe(0);
  });

  it("the real pipeline reports malformed arguments and unknown tools to the model, and the loop goes on", async () => {
    server.push(
      {
        toolCalls: [
          { id: "bad", name: "bash", arguments: '{"command": ' },
          { id: "typed", name: "bash", arguments: '{"command": {"x": 1}}' },
          { id: "nope", name: "deploy", arguments: "{}" },
        ],
      },
      { content: "ok" },
    );
    const out = outDir();
    const outcome = await executeRun({
      task: "t",
      model: new OpenAIChatModel({ model: "m", baseURL: server.baseURL, apiKeyEnv: "OPENAI_API_KEY" }),
      sessionOptions: { sessionId: `agent-${randomBytes(4).toString("hex")}`, tenant },
      createSession,
      transcript: new TranscriptWriter(join(out, "r.jsonl")),
    });
    expect(outcome.result).toEqual({ stopReason: "final", turns: 2, finalText: "ok" });
    const tools = server.requests[1]?.body.messages.filter((m) => m.role === "tool") ?? [];
    expect(tools.map((m) => m.tool_call_id)).toEqual(["bad", "typed", "nope"]);
    expect(tools[2]?.content).toBe("Tool deploy not found");
    expect(tools[0]?.content).toBe(
      'Validation failed for tool "bash":\n  - root: arguments are not valid JSON (Unexpected end of JSON input)\n\n' +
        'Received arguments:\n"{\\"command\\": "',
    );
    expect(tools[1]?.content).toBe(
      'Validation failed for tool "bash":\n  - command: must be string\n\nReceived arguments:\n{\n  "command": {\n    "x": 1\n  }\n}',
    );
  });

  it("Ctrl-C mid-command aborts the command, keeps the changes so far, and removes the container", async () => {
    server.push({
      toolCalls: [
        { id: "slow", name: "bash", arguments: '{"command":"echo partial > part.txt && sleep 60"}' },
      ],
    });
    const sessionId = `agent-abort-${randomBytes(4).toString("hex")}`;
    const controller = new AbortController();
    let running = 0;
    let made: Session | undefined;
    const out = outDir();
    const outcome = await executeRun({
      task: "t",
      model: new OpenAIChatModel({ model: "m", baseURL: server.baseURL, apiKeyEnv: "OPENAI_API_KEY" }),
      sessionOptions: { sessionId, tenant, sandbox: { workspace: { hostPath: workspace(), mode: "copy" } } },
      createSession: async (options) => {
        made = await createSession(options);
        return made;
      },
      transcript: new TranscriptWriter(join(out, "r.jsonl")),
      signal: controller.signal,
      onEvent: async (event: AgentEvent) => {
        if (event.type !== "tool_execution_start") return;
        // Mid-command: once it has written part.txt (the test's timeout bounds the wait; a fixed
        // wait is what a loaded host outlasts).
        await expect.poll(async () => (await made?.sandbox.stat("/workspace/part.txt"))?.size).toBe(8);
        running = await containersOfSession(sessionId);
        controller.abort();
      },
    });
    expect(running).toBe(1);
    expect(outcome.result.stopReason).toBe("aborted");
    expect(outcome.review?.changes.map((c) => c.path)).toEqual(["part.txt"]);
    expect(outcome.review?.patch).toContain("+++ b/part.txt\n@@ -0,0 +1,1 @@\n+partial\n");
    expect(await containersOfSession(sessionId)).toBe(0);
  });

  it("leaves excluded and policy-denied files out of the copy; git-ignored changes are listed apart", async () => {
    const host = workspace();
    writeFileSync(join(host, ".env"), "TOKEN=secret\n");
    writeFileSync(join(host, ".gitignore"), "__pycache__/\n");
    mkdirSync(join(host, "skip"));
    writeFileSync(join(host, "skip/big.bin"), "x\n");
    const command =
      "ls -A > listing.txt && mkdir __pycache__ && printf 'a\\0b' > __pycache__/m.pyc && echo leaked > .env";
    server.push({ toolCalls: [{ id: "c1", name: "bash", arguments: JSON.stringify({ command }) }] });
    server.push({ content: "done" });
    const outcome = await executeRun({
      task: "t",
      model: new OpenAIChatModel({ model: "m", baseURL: server.baseURL, apiKeyEnv: "OPENAI_API_KEY" }),
      sessionOptions: {
        sessionId: `agent-excl-${randomBytes(4).toString("hex")}`,
        tenant,
        sandbox: {
          workspace: { hostPath: host, mode: "copy", exclude: ["skip/"], excludeIf: (p) => p === ".env" },
        },
      },
      createSession,
      transcript: new TranscriptWriter(join(outDir(), "r.jsonl")),
    });
    expect(outcome.review?.changes.map((c) => c.path)).toEqual(["listing.txt"]);
    expect(outcome.review?.patch).toContain("@@ -0,0 +1,4 @@\n+.gitignore\n+README.md\n+listing.txt\n+src\n");
    expect(outcome.review?.ignored).toEqual([
      { path: ".env", reason: "excluded from the copy" },
      { path: "__pycache__/m.pyc", reason: "ignored by .gitignore" },
    ]);
  });
});
