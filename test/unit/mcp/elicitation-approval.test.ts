/**
 * ElicitationApproval with the real MCP SDK on both ends (an in-memory transport): as the approver
 * of the egress gateway's `ask` questions (AskRelay, through networkApprover, as `warden mcp` wires
 * it) the client's answer becomes the gateway's answer line; a client without elicitation is
 * refused as non-interactive without being asked; and an answer later than the SDK's default
 * request timeout (60 s) still counts, as the approval timeout (5 minutes) is the only deadline.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CancelledNotificationSchema,
  type ElicitRequest,
  ElicitRequestSchema,
  type ElicitResult,
} from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it, vi } from "vitest";
import { AskRelay } from "../../../src/egress/index.js";
import { createMcpServer, ElicitationApproval } from "../../../src/mcp/index.js";
import { networkApprover } from "../../../src/policy/index.js";
import type { Decision } from "../../../src/policy/types.js";

/** What the client's user does with one elicitation. */
type Answer = (request: ElicitRequest) => Promise<ElicitResult>;

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const c of open.splice(0)) await c.close();
});

/**
 * A server and an SDK client connected in memory; without `answer` the client lacks elicitation.
 * `beforeConnect` runs first, as `warden mcp` starts the session (and its gateway) before the
 * client connects.
 */
async function connected<T>(
  answer: Answer | undefined,
  beforeConnect: (server: Server) => T,
): Promise<T & { server: Server; client: Client; asked: ElicitRequest[] }> {
  const server = createMcpServer();
  const made = beforeConnect(server);
  const client = new Client(
    { name: "test", version: "1" },
    { capabilities: answer ? { elicitation: {} } : {} },
  );
  const asked: ElicitRequest[] = [];
  if (answer)
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request);
      return answer(request);
    });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  open.push(client, server);
  return { ...made, server, client, asked };
}

/** An AskRelay for `ask.test:443` answered through `server` as `warden mcp` wires it; `lines` are its answer lines. */
const relayOf =
  (timeoutMs = 10_000) =>
  (server: Server) => {
    const lines: string[] = [];
    const approve = networkApprover(new ElicitationApproval(server));
    const relay = new AskRelay({
      sessionId: "s1",
      rules: [{ host: "ask.test", ports: [443], decision: "ask" }],
      ...(approve ? { approve } : {}),
      timeoutMs,
      write: (line) => lines.push(line),
    });
    return { relay, lines };
  };

const question = (id: string, connection: number) => ({
  id,
  host: "ask.test",
  port: 443,
  connection: String(connection),
});
const accept =
  (decision: string): Answer =>
  async () => ({ action: "accept", content: { decision } });

describe("ElicitationApproval as the egress gateway's approver (warden mcp)", () => {
  it("puts the connection to the client's user and lets it through once on allow-once", async () => {
    const { relay, lines, asked } = await connected(accept("allow-once"), relayOf());
    expect(await relay.answer(question("q1", 40001))).toBe("once");
    expect(lines).toEqual(["WARDEN-ANSWER q1 OK once\n"]);
    expect(asked.map((r) => r.params)).toEqual([
      {
        mode: "form",
        message:
          "warden: Network connection needs approval: session s1 connects to ask.test:443\n  asked by rule 'ask ask.test:443'",
        requestedSchema: {
          type: "object",
          properties: {
            decision: {
              type: "string",
              title: "Decision",
              description:
                "allow-once lets this connection through; allow-session also lets later connections to this host and port through",
              enum: ["allow-once", "allow-session", "deny"],
            },
          },
          required: ["decision"],
        },
      },
    ]);
  });

  it("refuses on decline; allow-session covers the next connection without asking", async () => {
    const answers: Answer[] = [async () => ({ action: "decline" }), accept("allow-session")];
    const answer: Answer = (request) => (answers.shift() as Answer)(request);
    const { relay, lines, asked } = await connected(answer, relayOf());
    expect(await relay.answer(question("q1", 40001))).toBe("denied");
    expect(await relay.answer(question("q2", 40002))).toBe("session");
    expect(await relay.answer(question("q3", 40003))).toBe("cached");
    expect(lines).toEqual([
      "WARDEN-ANSWER q1 ERR denied\n",
      "WARDEN-ANSWER q2 OK session\n",
      "WARDEN-ANSWER q3 OK cached\n",
    ]);
    expect(asked).toHaveLength(2);
  });

  it("answers non-interactive, asking nobody, when the client does not support elicitation", async () => {
    const { relay, lines } = await connected(undefined, relayOf());
    expect(await relay.answer(question("q1", 40001))).toBe("non-interactive");
    expect(lines).toEqual(["WARDEN-ANSWER q1 ERR non-interactive\n"]);
  });

  it("refuses after the approval timeout and withdraws the question from the client", async () => {
    const never: Answer = () => new Promise<never>(() => {});
    const { relay, lines, client, asked } = await connected(never, relayOf(200));
    // The client's own handler would abort the question's handler (SDK 1.32 skips request id 0).
    const withdrawn: unknown[] = [];
    client.setNotificationHandler(CancelledNotificationSchema, (n) => {
      withdrawn.push(n.params.requestId);
    });
    expect(await relay.answer(question("q1", 40001))).toBe("timeout");
    expect(lines).toEqual(["WARDEN-ANSWER q1 ERR timeout\n"]);
    expect(asked).toHaveLength(1);
    await expect.poll(() => withdrawn).toEqual([0]);
  });
});

describe("ElicitationApproval's deadline", () => {
  const decision = { decision: "ask", ruleId: "default", trail: [] } as unknown as Decision;

  it("takes an answer given after the SDK's default 60 s request timeout (the signal is the deadline)", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const late: Answer = async () => {
      await new Promise((r) => setTimeout(r, 90_000));
      return { action: "accept", content: { decision: "allow-once" } };
    };
    const { server } = await connected(late, () => ({}));
    const answer = new ElicitationApproval(server).request({
      tool: "bash",
      args: { command: "sleep 0" },
      decision,
      signal: new AbortController().signal,
    });
    await vi.advanceTimersByTimeAsync(90_000);
    expect(await answer).toBe("allow-once");
  });
});
