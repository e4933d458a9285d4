/**
 * The approval provider of an MCP session: a policy `ask` becomes an MCP elicitation request
 * (`elicitation/create`, MCP 2025-06-18) to the client, which shows it to its user. A client that did
 * not declare the `elicitation` capability cannot be asked: the provider is then non-interactive and
 * the refusal says why. Declined, cancelled or unanswered requests mean deny.
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { describeRequest } from "../approval/index.js";
import type { ApprovalAnswer, ApprovalProvider, ApprovalRequest } from "../policy/index.js";

/** The answers offered to the user, in the order a client shows them. */
const ANSWERS: ApprovalAnswer[] = ["allow-once", "allow-session", "deny"];

/** Asks the connected MCP client's user through elicitation. */
export class ElicitationApproval implements ApprovalProvider {
  readonly nonInteractiveReason =
    "the MCP client does not support elicitation (allow the call in the policy, or use an MCP client that supports elicitation)";

  constructor(private readonly server: Server) {}

  /** True once the connected client declared the elicitation capability. */
  get interactive(): boolean {
    return this.server.getClientCapabilities()?.elicitation !== undefined;
  }

  /** Sends one elicitation; `accept` with a valid decision is the answer, anything else is deny. */
  async request(req: ApprovalRequest): Promise<ApprovalAnswer> {
    if (req.signal.aborted) return "deny";
    try {
      const result = await this.server.elicitInput(
        {
          message: `warden: ${describeRequest(req)}`,
          requestedSchema: {
            type: "object",
            properties: {
              decision: {
                type: "string",
                title: "Decision",
                description: "allow-once runs this call; allow-session also allows the same parts later",
                enum: ANSWERS,
              },
            },
            required: ["decision"],
          },
        },
        { signal: req.signal },
      );
      const decision = result.action === "accept" ? result.content?.decision : undefined;
      return ANSWERS.includes(decision as ApprovalAnswer) ? (decision as ApprovalAnswer) : "deny";
    } catch {
      return "deny";
    }
  }
}
