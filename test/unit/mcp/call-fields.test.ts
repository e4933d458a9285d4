/**
 * attack-38a: MCP tools/call has REST's bounds on a call's fields (src/pipeline/call-fields.ts, the
 * constants both use): a tool name over 128 characters and a progress token over 256 are refused
 * (isError) naming the field and the bound, and nothing runs. A 500 KB progress token, repeated in
 * every progress notification of a running call, made four `/mcp` calls whose streams were not
 * read grow a `warden serve` from 239 MB to 977 MB in 36 s; a 400 KB name made a 400 KB audit line.
 */
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import {
  MAX_PROGRESS_TOKEN_CHARS,
  MAX_TOOL_CALL_ID_CHARS,
  MAX_TOOL_NAME_CHARS,
} from "../../../src/pipeline/index.js";
import * as rest from "../../../src/server/http/schemas.js";
import type { ToolCall, ToolResultMessage } from "../../../src/tools/index.js";
import { connectSessionTools } from "../../helpers/mcp-in-memory.js";

async function connect() {
  const ran: ToolCall[] = [];
  const session = {
    providerTools: () => [
      { type: "function" as const, function: { name: "echo", description: "Echoes", parameters: {} } },
    ],
    runToolCalls: async (calls: ToolCall[]): Promise<ToolResultMessage[]> => {
      ran.push(...calls);
      return calls.map((c) => ({
        role: "toolResult" as const,
        toolCallId: c.id,
        toolName: c.name,
        content: [{ type: "text" as const, text: "ran" }],
        details: {},
        isError: false,
        timestamp: 1,
      }));
    },
  };
  const { client, close } = await connectSessionTools(session);
  /** tools/call with `name` and an optional raw progress token (the SDK client would make its own). */
  const call = (name: string, progressToken?: string | number) =>
    client.request(
      {
        method: "tools/call",
        params: { name, arguments: {}, ...(progressToken === undefined ? {} : { _meta: { progressToken } }) },
      },
      CallToolResultSchema,
    );
  return { call, ran, close };
}

describe("MCP tools/call field bounds (attack-38a)", () => {
  it("uses REST's bounds: names 128 characters, ids and progress tokens 256", () => {
    expect([MAX_TOOL_NAME_CHARS, MAX_TOOL_CALL_ID_CHARS, MAX_PROGRESS_TOKEN_CHARS]).toEqual([128, 256, 256]);
    expect(rest.MAX_TOOL_NAME_CHARS).toBe(MAX_TOOL_NAME_CHARS);
    expect(rest.MAX_TOOL_CALL_ID_CHARS).toBe(MAX_TOOL_CALL_ID_CHARS);
  });

  it("a 500,000-character progress token is refused naming the bound; nothing runs", async () => {
    const { call, ran, close } = await connect();
    try {
      expect(await call("echo", "T".repeat(500_000))).toEqual({
        content: [
          {
            type: "text",
            text: "Tool call 'mcp-1' has a progressToken of 500000 characters, over 256; the call was not run: send a shorter progressToken (a counter or a short id).",
          },
        ],
        isError: true,
      });
      expect(ran).toEqual([]);
    } finally {
      await close();
    }
  });

  it("a 129-character tool name is refused naming the bound; nothing runs", async () => {
    const { call, ran, close } = await connect();
    try {
      expect(await call("n".repeat(129))).toEqual({
        content: [
          {
            type: "text",
            text: "Tool call 'mcp-1' has a name of 129 characters, over 128; the call was not run: call a tool by a name tools/list gives.",
          },
        ],
        isError: true,
      });
      expect(ran).toEqual([]);
    } finally {
      await close();
    }
  });

  it("at the bounds the calls run: a 128-character name, a 256-character token, a number token", async () => {
    const { call, ran, close } = await connect();
    try {
      for (const [name, token] of [
        ["n".repeat(128), undefined],
        ["echo", "t".repeat(256)],
        ["echo", 7],
      ] as const) {
        expect(await call(name, token)).toEqual({
          content: [{ type: "text", text: "ran" }],
          isError: false,
          _meta: { "io.warden/details": {} },
        });
      }
      expect(ran.map((c) => [c.id, c.name])).toEqual([
        ["mcp-1", "n".repeat(128)],
        ["mcp-2", "echo"],
        ["mcp-3", "echo"],
      ]);
    } finally {
      await close();
    }
  });
});
