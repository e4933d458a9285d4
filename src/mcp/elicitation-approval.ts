/**
 * The approval provider of an MCP session: a policy `ask`, of a tool call or of a connection under
 * a network `ask` rule (src/policy's networkApprover), becomes an MCP elicitation request
 * (`elicitation/create`, MCP 2025-06-18) to the client, which shows it to its user. A client that did
 * not declare the `elicitation` capability cannot be asked: the provider is then non-interactive and
 * the refusal says why. Declined, cancelled or unanswered requests mean deny.
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { describeRequest } from "../approval/index.js";
import type { ApprovalAnswer, ApprovalProvider, ApprovalRequest } from "../policy/index.js";

/** The answers offered to the user, in the order a client shows them. */
const ANSWERS: ApprovalAnswer[] = ["allow-once", "allow-session", "deny"];

/**
 * The SDK's own deadline of an elicitation, in ms: the longest a Node timer takes (about 24.8 days).
 * The SDK would otherwise refuse after its default 60 s; the request's signal (the approval timeout
 * of the policy hook or the egress gateway) is the real deadline.
 */
const ELICITATION_SDK_TIMEOUT_MS = 2_147_483_647;

/** What the two allowing answers mean, for the client's form: a tool call or a connection. */
function decisionDescription(req: ApprovalRequest): string {
  return req.network
    ? "allow-once lets this connection through; allow-session also lets later connections to this host and port through"
    : "allow-once runs this call; allow-session also allows the same parts later";
}

/** Asks the connected MCP client's user through elicitation. */
export class ElicitationApproval implements ApprovalProvider {
  readonly nonInteractiveReason =
    "the MCP client does not support elicitation (allow the call in the policy, or use an MCP client that supports elicitation)";

  constructor(private readonly server: Server) {}

  /** True once the connected client declared the elicitation capability. */
  get interactive(): boolean {
    return this.server.getClientCapabilities()?.elicitation !== undefined;
  }

  /**
   * Sends one elicitation and waits until the client answers or `req.signal` fires; `accept` with a
   * valid decision is the answer, anything else (decline, cancel, abort, a failed request) is deny.
   */
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
                description: decisionDescription(req),
                enum: ANSWERS,
              },
            },
            required: ["decision"],
          },
        },
        { signal: req.signal, timeout: ELICITATION_SDK_TIMEOUT_MS },
      );
      const decision = result.action === "accept" ? result.content?.decision : undefined;
      return ANSWERS.includes(decision as ApprovalAnswer) ? (decision as ApprovalAnswer) : "deny";
    } catch {
      return "deny";
    }
  }
}
