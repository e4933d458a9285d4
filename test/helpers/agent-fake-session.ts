/**
 * A fake Session for agent-loop unit tests: tools are plain functions over an in-memory file map; it
 * mimics the pipeline's observable contract (unknown tool, validation error for non-object arguments,
 * results in call order, abort).
 */
import type { ProviderTool, RunToolCallsOptions, ToolExecutionEvent } from "../../src/pipeline/types.js";
import type { ToolCall, ToolResultMessage } from "../../src/tools/types.js";

type FakeTool = (
  args: Record<string, unknown>,
  signal?: AbortSignal,
) => Promise<{ text: string; isError?: boolean }>;

/** What a test can inspect afterwards. */
export interface FakeSession {
  id: string;
  files: Map<string, string>;
  batches: ToolCall[][];
  events: ToolExecutionEvent[];
  providerTools(): ProviderTool[];
  runToolCalls(calls: ToolCall[], options?: RunToolCallsOptions): Promise<ToolResultMessage[]>;
}

const result = (call: ToolCall, text: string, isError: boolean): ToolResultMessage => ({
  role: "toolResult",
  toolCallId: call.id,
  toolName: call.name,
  content: [{ type: "text", text }],
  isError,
  timestamp: 0,
});

/** A fake session with `write`, `read` and `bash` (bash understands `sleep N` and `echo X`). */
export function createFakeSession(): FakeSession {
  const files = new Map<string, string>();
  const tools: Record<string, FakeTool> = {
    read: async (args) => {
      const text = files.get(String(args.path));
      return text === undefined ? { text: `ENOENT: ${String(args.path)}`, isError: true } : { text };
    },
    write: async (args) => {
      if (typeof args.content !== "string") return { text: "content must be string", isError: true };
      files.set(String(args.path), args.content);
      return { text: `Successfully wrote ${args.content.length} bytes to ${String(args.path)}` };
    },
    bash: (args, signal) =>
      new Promise((resolve) => {
        const command = String(args.command);
        const sleep = /^sleep (\d+)/.exec(command);
        if (!sleep) return resolve({ text: command.replace(/^echo /, "") });
        const timer = setTimeout(() => resolve({ text: "" }), Number(sleep[1]) * 1000);
        signal?.addEventListener("abort", () => {
          clearTimeout(timer);
          resolve({ text: "Command aborted", isError: true });
        });
      }),
  };
  const session: FakeSession = {
    id: "fake-session",
    files,
    batches: [],
    events: [],
    providerTools: () =>
      Object.keys(tools).map((name) => ({
        type: "function",
        function: { name, description: `${name} tool`, parameters: { type: "object", properties: {} } },
      })),
    async runToolCalls(calls, options = {}) {
      session.batches.push(calls);
      const emit = (event: ToolExecutionEvent) => {
        session.events.push(event);
        options.onEvent?.(event);
      };
      return Promise.all(
        calls.map(async (call) => {
          emit({
            type: "tool_execution_start",
            toolCallId: call.id,
            toolName: call.name,
            args: call.arguments,
          });
          const tool = tools[call.name];
          let out: ToolResultMessage;
          if (!tool) out = result(call, `Tool ${call.name} not found`, true);
          else if (typeof call.arguments !== "object" || call.arguments === null) {
            out = result(call, `Validation failed for tool "${call.name}":\n  - root: must be object`, true);
          } else {
            const r = await tool(call.arguments as Record<string, unknown>, options.signal);
            out = result(call, r.text, r.isError ?? false);
          }
          emit({ type: "tool_execution_end", toolCallId: call.id, toolName: call.name, result: out });
          return out;
        }),
      );
    },
  };
  return session;
}
