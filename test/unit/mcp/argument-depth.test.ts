/**
 * Issue 37, item 2: MCP tools/call has REST's argument depth bound (MAX_ARGUMENT_DEPTH, the one
 * constant both use). Arguments past it are refused (isError) naming the bound and nothing
 * runs (a 24 KB call nested 12,000 deep once answered 32 MB); at the bound the call runs, and a
 * validation error it meets is bounded (src/pipeline/validate.ts).
 */
import { describe, expect, it } from "vitest";
import { MAX_ARGUMENT_DEPTH, validateToolArguments } from "../../../src/pipeline/index.js";
import { MAX_ARGUMENT_DEPTH as REST_MAX_ARGUMENT_DEPTH } from "../../../src/server/http/call-arguments.js";
import type { ToolCall, ToolResultMessage } from "../../../src/tools/index.js";
import { connectSessionTools } from "../../helpers/mcp-in-memory.js";
import { echoTool } from "../../helpers/pipeline-fakes.js";

/** `x` in `arrays` nested arrays: the arguments object is level 1, so x's innermost is level arrays + 1. */
const deep = (arrays: number) => JSON.parse(`{"text":{},"x":${"[".repeat(arrays)}1${"]".repeat(arrays)}}`);

async function connect() {
  const ran: ToolCall[] = [];
  const tool = echoTool();
  const session = {
    providerTools: () => [
      { type: "function" as const, function: { name: "echo", description: "Echoes", parameters: {} } },
    ],
    runToolCalls: async (calls: ToolCall[]): Promise<ToolResultMessage[]> => {
      ran.push(...calls);
      // The pipeline's first stage: validation, whose error text the result carries.
      const outcome = validateToolArguments(tool, calls[0]?.arguments);
      const text = outcome.ok ? "ok" : outcome.message;
      return [
        {
          role: "toolResult",
          toolCallId: calls[0]?.id ?? "",
          toolName: "echo",
          content: [{ type: "text", text }],
          details: {},
          isError: !outcome.ok,
          timestamp: 1,
        },
      ];
    },
  };
  const { client, close } = await connectSessionTools(session);
  return { client, ran, close };
}

describe("MCP tools/call argument depth (issue 37, item 2)", () => {
  it("uses REST's bound, 64 levels", () => {
    expect(MAX_ARGUMENT_DEPTH).toBe(64);
    expect(REST_MAX_ARGUMENT_DEPTH).toBe(MAX_ARGUMENT_DEPTH);
  });

  it("arguments nested past 64 levels (and 12,000 deep) are refused naming the bound; nothing runs", async () => {
    const { client, ran, close } = await connect();
    try {
      for (const arrays of [12_000, MAX_ARGUMENT_DEPTH]) {
        const result = await client.callTool({ name: "echo", arguments: deep(arrays) });
        expect(result).toEqual({
          content: [
            {
              type: "text",
              text: `Tool call 'mcp-${arrays === 12_000 ? 1 : 2}' has arguments nested deeper than 64 levels; the call was not run: send flatter arguments.`,
            },
          ],
          isError: true,
        });
      }
      expect(ran).toEqual([]);
    } finally {
      await close();
    }
  });

  it("at the bound the call runs, and its validation error echoes at most 8 levels", async () => {
    const { client, ran, close } = await connect();
    try {
      const result = (await client.callTool({ name: "echo", arguments: deep(MAX_ARGUMENT_DEPTH - 1) })) as {
        content: { text: string }[];
        isError: boolean;
      };
      expect(ran).toHaveLength(1);
      expect(result.isError).toBe(true);
      const opens = [4, 6, 8, 10, 12, 14].map((n) => `${" ".repeat(n)}[`).join("\n");
      const closes = [14, 12, 10, 8, 6, 4].map((n) => `${" ".repeat(n)}]`).join("\n");
      expect(result.content[0]?.text).toBe(
        'Validation failed for tool "echo":\n  - text: must be string\n\nReceived arguments:\n' +
          `{\n  "text": {},\n  "x": [\n${opens}\n${" ".repeat(16)}[…]\n${closes}\n  ]\n}\n` +
          "[Received arguments cut: at most 2048 characters and 8 levels of nesting are echoed]",
      );
      expect(result.content[0]?.text.length).toBe(348);
    } finally {
      await close();
    }
  });
});
