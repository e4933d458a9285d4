// Runs the real Pi's tools (@mariozechner/pi-coding-agent 0.73.1) through pi-agent-core's agent loop.
// It runs ONLY inside a throwaway sandbox container (test/pi/pi-container.ts): Pi's tools have no
// sandbox of their own. Input: argv[2], a JSON file {cwd, batches: [[{id, name, arguments}]]}, where
// `arguments` is an object or a raw string (a provider would have repaired it with parseStreamingJson).
// Output: one line per tool result on stdout, prefixed with RESULT_PREFIX, in the loop's order.
import { readFileSync } from "node:fs";
import { runAgentLoop } from "@mariozechner/pi-agent-core";
import { createAssistantMessageEventStream, parseStreamingJson } from "@mariozechner/pi-ai";
import {
  createBashTool,
  createEditTool,
  createFindTool,
  createGrepTool,
  createLsTool,
  createReadTool,
  createWriteTool,
} from "@mariozechner/pi-coding-agent";

const RESULT_PREFIX = "@@pi-result@@";
const input = JSON.parse(readFileSync(process.argv[2], "utf8"));
const cwd = input.cwd;

// Pi's defaults: each factory with only the cwd.
const tools = [
  createReadTool(cwd),
  createBashTool(cwd),
  createEditTool(cwd),
  createWriteTool(cwd),
  createGrepTool(cwd),
  createFindTool(cwd),
  createLsTool(cwd),
];

const zeroUsage = {
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};
const model = {
  id: "replay",
  name: "replay",
  api: "replay",
  provider: "replay",
  baseUrl: "http://127.0.0.1:9",
  reasoning: false,
  input: ["text", "image"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 1_000_000,
  maxTokens: 100_000,
};

let turn = 0;
/** The "model": each call returns the next recorded batch as one assistant message, then a final text. */
function streamFn() {
  const stream = createAssistantMessageEventStream();
  const batch = input.batches[turn++];
  const content = batch
    ? batch.map((c) => ({
        type: "toolCall",
        id: c.id,
        name: c.name,
        arguments: typeof c.arguments === "string" ? parseStreamingJson(c.arguments) : c.arguments,
      }))
    : [{ type: "text", text: "done" }];
  const message = {
    role: "assistant",
    content,
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage: zeroUsage,
    stopReason: batch ? "toolUse" : "stop",
    timestamp: Date.now(),
  };
  queueMicrotask(() => stream.push({ type: "done", reason: message.stopReason, message }));
  return stream;
}

const out = (obj) => process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(obj)}\n`);

await runAgentLoop(
  [{ role: "user", content: [{ type: "text", text: "replay" }], timestamp: Date.now() }],
  { systemPrompt: "", messages: [], tools },
  { model, convertToLlm: (messages) => messages },
  async (event) => {
    if (event.type === "message_end" && event.message.role === "toolResult") {
      const m = event.message;
      out({ toolCallId: m.toolCallId, toolName: m.toolName, isError: m.isError, content: m.content });
    }
  },
  undefined,
  streamFn,
);
out({ done: true, turns: turn });
