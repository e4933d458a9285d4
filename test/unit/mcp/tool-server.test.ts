/** The MCP mapping: results, progress messages, elicitation answers, and the README's client snippets. */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { describe, expect, it } from "vitest";
import {
  DETAILS_META_KEY,
  ElicitationApproval,
  PROGRESS_MESSAGE_MAX_CHARS,
  progressMessage,
  toCallToolResult,
} from "../../../src/mcp/index.js";
import type { Decision } from "../../../src/policy/types.js";
import { readmeCodexArgs, readmeServerExample } from "../../helpers/mcp-fixture.js";

const decision = { decision: "ask", ruleId: "default", trail: [] } as unknown as Decision;

/** A stand-in for the SDK server: declared capabilities and a scripted elicitation answer. */
function fakeServer(capabilities: object | undefined, elicit: () => Promise<unknown>): Server {
  return { getClientCapabilities: () => capabilities, elicitInput: elicit } as unknown as Server;
}

describe("toCallToolResult", () => {
  it("maps text and image content one to one, keeps isError and puts details in _meta", () => {
    expect(
      toCallToolResult({
        role: "toolResult",
        toolCallId: "mcp-1",
        toolName: "read",
        content: [
          { type: "text", text: "a" },
          { type: "image", data: "AAAA", mimeType: "image/png" },
        ],
        details: { truncation: null },
        isError: true,
        timestamp: 1,
      }),
    ).toEqual({
      content: [
        { type: "text", text: "a" },
        { type: "image", data: "AAAA", mimeType: "image/png" },
      ],
      isError: true,
      _meta: { [DETAILS_META_KEY]: { truncation: null } },
    });
  });
});

describe("progressMessage", () => {
  it("is the tail of the text so far, at most PROGRESS_MESSAGE_MAX_CHARS", () => {
    const long = `${"x".repeat(PROGRESS_MESSAGE_MAX_CHARS)}tail`;
    expect(progressMessage({ content: [{ type: "text", text: long }] })).toBe(long.slice(4));
    expect(progressMessage({ content: [{ type: "text", text: "line1\n" }] })).toBe("line1\n");
  });
});

describe("ElicitationApproval", () => {
  it("is non-interactive, with a reason naming elicitation, when the client lacks the capability", () => {
    const approval = new ElicitationApproval(fakeServer({}, async () => ({})));
    expect(approval.interactive).toBe(false);
    expect(approval.nonInteractiveReason).toBe(
      "the MCP client does not support elicitation (allow the call in the policy, or use an MCP client that supports elicitation)",
    );
    expect(new ElicitationApproval(fakeServer({ elicitation: {} }, async () => ({}))).interactive).toBe(true);
  });

  it("answers the accepted decision; decline, an unknown value or a failed request mean deny", async () => {
    const req = { tool: "bash", args: {}, decision, signal: new AbortController().signal };
    const answer = (result: () => Promise<unknown>) =>
      new ElicitationApproval(fakeServer({ elicitation: {} }, result)).request(req);
    expect(await answer(async () => ({ action: "accept", content: { decision: "allow-session" } }))).toBe(
      "allow-session",
    );
    expect(await answer(async () => ({ action: "decline" }))).toBe("deny");
    expect(await answer(async () => ({ action: "accept", content: { decision: "yes" } }))).toBe("deny");
    expect(await answer(async () => Promise.reject(new Error("gone")))).toBe("deny");
  });
});

describe("README MCP snippets", () => {
  it("Claude Code's .mcp.json and Codex's config.toml start the same server", () => {
    const example = readmeServerExample();
    expect(example.command).toBe("node");
    expect(readmeCodexArgs()).toEqual(example.args);
    expect(example.args.slice(1, 4)).toEqual(["mcp", "--workspace", "."]);
  });
});
