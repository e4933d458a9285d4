/** The agent loop with the real openai client against the wire-protocol test server and a fake session. */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runAgent } from "../../../src/agent/loop.js";
import { OpenAIChatModel } from "../../../src/agent/model.js";
import { readRunTranscript, TranscriptWriter } from "../../../src/agent/transcript.js";
import type { AgentEvent } from "../../../src/agent/types.js";
import { parseReplayTurns as parseForReplay } from "../../../src/session/replay-turns.js";
import { createFakeSession } from "../../helpers/agent-fake-session.js";
import { type OpenAITestServer, startOpenAITestServer } from "../../helpers/openai-test-server.js";

let server: OpenAITestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function modelFor(s: OpenAITestServer) {
  return new OpenAIChatModel({
    model: "test-model",
    baseURL: s.baseURL,
    apiKey: "sk-test",
    apiKeyEnv: "OPENAI_API_KEY",
    retry: { baseDelayMs: 1, maxDelayMs: 50 },
  });
}

const toolMessages = (s: OpenAITestServer, request: number) =>
  s.requests[request]?.body.messages.filter((m) => m.role === "tool");

describe("agent loop", () => {
  it("runs a multi-turn task: write a file, run a command, answer", async () => {
    server = await startOpenAITestServer([
      {
        content: "I'll write it.",
        toolCalls: [{ id: "call_w", name: "write", arguments: '{"path":"a.txt","content":"hi\\n"}' }],
      },
      { toolCalls: [{ id: "call_b", name: "bash", arguments: '{"command":"echo done"}' }] },
      { content: "Wrote a.txt and checked it." },
    ]);
    const session = createFakeSession();
    const events: AgentEvent[] = [];
    const result = await runAgent({
      session,
      model: modelFor(server),
      task: "make a.txt",
      onEvent: (e) => events.push(e),
    });

    expect(result).toEqual({ stopReason: "final", turns: 3, finalText: "Wrote a.txt and checked it." });
    expect(session.files.get("a.txt")).toBe("hi\n");
    expect(server.requests).toHaveLength(3);
    expect(server.requests[0]?.body.stream).toBe(true);
    expect(server.requests[0]?.body.tools?.map((t) => t.function.name)).toEqual(["read", "write", "bash"]);
    expect(server.requests[0]?.headers.authorization).toBe("Bearer sk-test");
    expect(toolMessages(server, 1)).toEqual([
      { role: "tool", tool_call_id: "call_w", content: "Successfully wrote 3 bytes to a.txt" },
    ]);
    expect(server.requests[1]?.body.messages[2]).toEqual({
      role: "assistant",
      content: "I'll write it.",
      tool_calls: [
        {
          id: "call_w",
          type: "function",
          function: { name: "write", arguments: '{"path":"a.txt","content":"hi\\n"}' },
        },
      ],
    });
    expect(toolMessages(server, 2)?.[1]).toEqual({ role: "tool", tool_call_id: "call_b", content: "done" });
    const text = events
      .filter((e) => e.type === "text_delta")
      .map((e) => (e.type === "text_delta" ? e.text : ""));
    expect(text.join("")).toBe("I'll write it.Wrote a.txt and checked it.");
    expect(events.at(-1)).toEqual({
      type: "agent_end",
      stopReason: "final",
      turns: 3,
      finalText: "Wrote a.txt and checked it.",
    });
  });

  it("sends parallel calls as one batch and returns results in call order", async () => {
    server = await startOpenAITestServer([
      {
        toolCalls: [
          { id: "c1", name: "bash", arguments: '{"command":"sleep 1"}' },
          { id: "c2", name: "bash", arguments: '{"command":"echo fast"}' },
          { id: "c3", name: "read", arguments: '{"path":"missing"}' },
        ],
      },
      { content: "ok" },
    ]);
    const session = createFakeSession();
    await runAgent({ session, model: modelFor(server), task: "t" });
    expect(session.batches.map((b) => b.map((c) => c.id))).toEqual([["c1", "c2", "c3"]]);
    const ends = session.events.filter((e) => e.type === "tool_execution_end").map((e) => e.toolCallId);
    expect(ends).toEqual(["c2", "c3", "c1"]);
    expect(toolMessages(server, 1)).toEqual([
      { role: "tool", tool_call_id: "c1", content: "(no output)" },
      { role: "tool", tool_call_id: "c2", content: "fast" },
      { role: "tool", tool_call_id: "c3", content: "ENOENT: missing" },
    ]);
  });

  it("passes malformed arguments through as the raw string and goes on", async () => {
    server = await startOpenAITestServer([
      { toolCalls: [{ id: "bad", name: "write", arguments: '{"path": "a.txt", "content": ' }] },
      { content: "gave up" },
    ]);
    const session = createFakeSession();
    const result = await runAgent({ session, model: modelFor(server), task: "t" });
    expect(session.batches[0]).toEqual([
      { id: "bad", name: "write", arguments: '{"path": "a.txt", "content": ' },
    ]);
    expect(toolMessages(server, 1)).toEqual([
      {
        role: "tool",
        tool_call_id: "bad",
        content: 'Validation failed for tool "write":\n  - root: must be object',
      },
    ]);
    expect(result.stopReason).toBe("final");
  });

  it("reports an unknown tool as an error result and goes on", async () => {
    server = await startOpenAITestServer([
      { toolCalls: [{ id: "u1", name: "deploy", arguments: "{}" }] },
      { content: "no deploy tool" },
    ]);
    const result = await runAgent({ session: createFakeSession(), model: modelFor(server), task: "t" });
    expect(toolMessages(server, 1)).toEqual([
      { role: "tool", tool_call_id: "u1", content: "Tool deploy not found" },
    ]);
    expect(result).toEqual({ stopReason: "final", turns: 2, finalText: "no deploy tool" });
  });

  it("runs none of the calls of a message cut off by the length limit", async () => {
    server = await startOpenAITestServer([
      {
        finishReason: "length",
        toolCalls: [
          { id: "l1", name: "bash", arguments: '{"command":"echo one"}' },
          { id: "l2", name: "write", arguments: '{"path":"x","content":"abc' },
        ],
      },
      { content: "retrying later" },
    ]);
    const session = createFakeSession();
    await runAgent({ session, model: modelFor(server), task: "t" });
    expect(session.batches).toEqual([]);
    const expected = (name: string) =>
      `Tool call ${name} was not run: the response hit the output token limit (finish_reason "length"), ` +
      "so its arguments may be incomplete. Re-issue the call, with shorter arguments if needed.";
    expect(toolMessages(server, 1)).toEqual([
      { role: "tool", tool_call_id: "l1", content: expected("bash") },
      { role: "tool", tool_call_id: "l2", content: expected("write") },
    ]);
  });

  it("stops at --max-turns", async () => {
    server = await startOpenAITestServer([
      { toolCalls: [{ id: "m1", name: "bash", arguments: '{"command":"echo 1"}' }] },
      { toolCalls: [{ id: "m2", name: "bash", arguments: '{"command":"echo 2"}' }] },
    ]);
    const result = await runAgent({
      session: createFakeSession(),
      model: modelFor(server),
      task: "t",
      maxTurns: 2,
    });
    expect(result).toEqual({ stopReason: "max_turns", turns: 2, finalText: "" });
    expect(server.requests).toHaveLength(2);
  });

  it("aborts a running command and stops with stopReason aborted", async () => {
    server = await startOpenAITestServer([
      { toolCalls: [{ id: "s1", name: "bash", arguments: '{"command":"sleep 30"}' }] },
    ]);
    const session = createFakeSession();
    const controller = new AbortController();
    const result = await runAgent({
      session,
      model: modelFor(server),
      task: "t",
      signal: controller.signal,
      onEvent: (e) => {
        if (e.type === "tool_execution_start") setTimeout(() => controller.abort(), 50);
      },
    });
    expect(result.stopReason).toBe("aborted");
    expect(server.requests).toHaveLength(1);
  });

  it("writes a transcript whose messages are the conversation the model saw", async () => {
    server = await startOpenAITestServer([
      { toolCalls: [{ id: "t1", name: "write", arguments: '{"path":"f","content":"x"}' }] },
      { content: "done" },
    ]);
    const path = join(mkdtempSync(join(tmpdir(), "warden-agent-")), "run.jsonl");
    const transcript = new TranscriptWriter(path);
    await runAgent({ session: createFakeSession(), model: modelFor(server), task: "t", transcript });
    const parsed = readRunTranscript(path);
    expect(parsed.messages).toEqual([
      ...(server.requests[1]?.body.messages ?? []),
      { role: "assistant", content: "done" },
    ]);
    expect(parsed.records.map((r) => r.warden)).toEqual(["tool_result"]);
    expect(readFileSync(path, "utf8").split("\n").filter(Boolean)).toHaveLength(6);
    // Round trip: `warden replay` reads the same file and finds the one batch, skipping every other line.
    expect(parseForReplay(readFileSync(path, "utf8"))).toEqual([
      { line: 3, calls: [{ id: "t1", name: "write", argumentsText: '{"path":"f","content":"x"}' }] },
    ]);
  });
});
