/**
 * `warden run` with a model that repeats a tool-call id in one message: the real pipeline refuses the
 * batch, nothing runs, and the model gets one error result per call, in call order, to re-issue them.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { runAgent } from "../../../src/agent/loop.js";
import { OpenAIChatModel } from "../../../src/agent/model.js";
import { readRunTranscript, TranscriptWriter } from "../../../src/agent/transcript.js";
import { runToolCalls } from "../../../src/pipeline/index.js";
import type { AnyTool } from "../../../src/tools/types.js";
import { type OpenAITestServer, startOpenAITestServer } from "../../helpers/openai-test-server.js";
import { contextWith, echoTool } from "../../helpers/pipeline-fakes.js";

let server: OpenAITestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

it("sends one error result per call back to the model when a message repeats a tool-call id; nothing runs", async () => {
  server = await startOpenAITestServer([
    {
      toolCalls: [
        { id: "call_0", name: "echo", arguments: '{"text":"one"}' },
        { id: "call_0", name: "shout", arguments: '{"text":"two"}' },
      ],
    },
    { content: "Done." },
  ]);
  const ran: string[] = [];
  const tool = (name: string): AnyTool =>
    echoTool({
      name,
      execute: async (id: string) => {
        ran.push(id);
        return { content: [{ type: "text", text: "ran" }] };
      },
    });
  const ctx = contextWith([tool("echo"), tool("shout")]);
  const session = {
    id: "s1",
    providerTools: () => [],
    runToolCalls: (calls: Parameters<typeof runToolCalls>[0]) => runToolCalls(calls, ctx),
  };
  const model = new OpenAIChatModel({
    model: "test-model",
    baseURL: server.baseURL,
    apiKey: "sk-test",
    apiKeyEnv: "OPENAI_API_KEY",
    retry: { baseDelayMs: 1, maxDelayMs: 50 },
  });
  const path = join(mkdtempSync(join(tmpdir(), "warden-agent-dup-")), "run.jsonl");
  const result = await runAgent({ session, model, task: "go", transcript: new TranscriptWriter(path) });
  expect(result).toMatchObject({ stopReason: "final", turns: 2 });
  expect(ran).toEqual([]);
  const text =
    "Tool call id 'call_0' appears more than once in this batch; every call of a batch needs its own id. " +
    "No call of the batch was run: re-issue the calls with distinct ids.";
  expect(server.requests[1]?.body.messages.filter((m) => m.role === "tool")).toEqual([
    { role: "tool", tool_call_id: "call_0", content: text },
    { role: "tool", tool_call_id: "call_0", content: text },
  ]);
  // Each call keeps its own result (matched by position, not by the repeated id).
  const recorded = readRunTranscript(path).records.filter((r) => r.warden === "tool_result");
  expect(
    recorded.map((r) => [
      (r.result as { toolName: string }).toolName,
      (r.result as { isError: boolean }).isError,
    ]),
  ).toEqual([
    ["echo", true],
    ["shout", true],
  ]);
});
