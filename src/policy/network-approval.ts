/**
 * The session's approval provider as the approver of its `ask` network rules
 * (NetworkOptions.approve, src/egress): each connection under an `ask` rule becomes one
 * ApprovalRequest with tool `network`, args `{ host, port }` and `network` set, so every provider
 * (terminal, programmatic/HTTP approvals, MCP elicitation) shows it; a provider that cannot ask
 * anyone (non-interactive) answers `non-interactive`, so `ask` means deny. The timeout and the "allow for
 * the session" memory (exactly that host and port) are the gateway's (src/egress/ask-relay.ts).
 */
import type { NetworkApprovalAnswer, NetworkApprovalRequest } from "../egress/index.js";
import type { ApprovalProvider, ApprovalRequest } from "./approver.js";

/** Who a session belongs to, passed on to each request (server: the tenant and the key's owner). */
export interface NetworkApproverContext {
  owner?: string;
  tenant?: string;
}

/** The ApprovalRequest of one connection waiting for approval. */
export function networkApprovalRequest(
  req: NetworkApprovalRequest,
  context: NetworkApproverContext = {},
): ApprovalRequest {
  const target = `${req.host}:${req.port}`;
  return {
    tool: "network",
    args: { host: req.host, port: req.port },
    decision: {
      decision: "ask",
      ruleId: req.rule,
      part: target,
      reason: `the sandbox connects to ${target}`,
      trail: [],
    },
    signal: req.signal,
    sessionId: req.sessionId,
    ...(context.owner !== undefined ? { owner: context.owner } : {}),
    ...(context.tenant !== undefined ? { tenant: context.tenant } : {}),
    network: { host: req.host, port: req.port, rule: req.rule },
  };
}

/**
 * NetworkOptions.approve for `provider`, or undefined without one (the gateway then refuses `ask`
 * connections as `non-interactive`). Whether the provider can ask anyone is read per connection,
 * not once: an MCP client declares elicitation only after the session (and its gateway) exists. A
 * provider that cannot ask (non-interactive, an MCP client without elicitation) answers
 * `non-interactive` without being asked; an aborted request answers deny.
 */
export function networkApprover(
  provider: ApprovalProvider | undefined,
  context: NetworkApproverContext = {},
): ((req: NetworkApprovalRequest) => Promise<NetworkApprovalAnswer>) | undefined {
  if (!provider) return undefined;
  return async (req) => {
    if (provider.interactive === false) return "non-interactive";
    if (req.signal.aborted) return "deny";
    return provider.request(networkApprovalRequest(req, context));
  };
}
