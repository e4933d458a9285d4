/**
 * The session's approval provider as the approver of its `ask` network rules
 * (NetworkOptions.approve, src/egress): each connection under an `ask` rule becomes one
 * ApprovalRequest with tool `network`, args `{ host, port }` and `network` set, so every provider
 * (terminal, programmatic/HTTP approvals, MCP elicitation) shows it; a provider that never asks
 * anyone (non-interactive) gives no approver, so `ask` means deny. The timeout and the "allow for
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
 * NetworkOptions.approve for `provider`, or undefined when nobody can be asked (no provider, or a
 * non-interactive one): the gateway then refuses `ask` connections as `non-interactive`. A provider
 * that becomes non-interactive later (an MCP client without elicitation) answers deny.
 */
export function networkApprover(
  provider: ApprovalProvider | undefined,
  context: NetworkApproverContext = {},
): ((req: NetworkApprovalRequest) => Promise<NetworkApprovalAnswer>) | undefined {
  if (!provider || provider.interactive === false) return undefined;
  return async (req) => {
    if (provider.interactive === false || req.signal.aborted) return "deny";
    return provider.request(networkApprovalRequest(req, context));
  };
}
