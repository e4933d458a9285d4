/**
 * Pending approvals of `ask` decisions, answered over HTTP (GET /v1/approvals, POST /v1/approvals/:id).
 * A tenant-scoped view over src/approval's ProgrammaticApproval, which the policy hook of every
 * session asks: each request carries its tenant, and another tenant can neither list nor answer it
 * (NotFoundError, 404, the same as an unknown id). Unanswered requests are denied by the policy hook
 * on its timeout or when the call is aborted (fail closed).
 */
import { type PendingApproval, ProgrammaticApproval } from "../../approval/index.js";
import { NotFoundError } from "../../errors.js";
import type { ApprovalAnswer, PolicyDecisionKind } from "../../policy/index.js";

/** An HTTP decision: the approval answers, with `allow` as a short name for `allow-once`. */
export type ApprovalDecision = ApprovalAnswer | "allow";

/** A pending ask as its tenant sees it. `createdAt` is ISO-8601. */
export interface ApprovalView {
  id: string;
  sessionId: string;
  /** The tool call that waits for the answer. */
  toolCallId?: string;
  tool: string;
  args: unknown;
  /** The policy's decision, here always "ask". */
  decision: PolicyDecisionKind;
  rule?: string;
  reason?: string;
  part?: string;
  /** A network connection under an `ask` rule (tool `network`): host, port and the rule that asked. */
  network?: { host: string; port: number; rule: string };
  createdAt: string;
}

function viewOf(p: PendingApproval): ApprovalView {
  return {
    id: p.id,
    sessionId: p.sessionId ?? "",
    ...(p.toolCallId ? { toolCallId: p.toolCallId } : {}),
    tool: p.tool,
    args: p.args,
    decision: p.decision.decision,
    ...(p.decision.ruleId ? { rule: p.decision.ruleId } : {}),
    ...(p.decision.reason ? { reason: p.decision.reason } : {}),
    ...(p.decision.part ? { part: p.decision.part } : {}),
    ...(p.network ? { network: { ...p.network } } : {}),
    createdAt: new Date(p.createdAt).toISOString(),
  };
}

/** The server's approvals: one provider for every session, views per tenant. */
export class ApprovalBroker {
  /** Give this to createPolicyHook as `approval`. */
  readonly provider = new ProgrammaticApproval();

  /** The tenant's pending asks, oldest first. */
  list(tenant: string): ApprovalView[] {
    return this.provider.pending({ tenant }).map(viewOf);
  }

  /**
   * Calls `listener` with each new ask of `tenant`'s session `sessionId` (the SSE stream of a batch
   * announces them as `approval_requested`); returns the function that stops it.
   */
  watch(tenant: string, sessionId: string, listener: (view: ApprovalView) => void): () => void {
    return this.provider.onRequest((p) => {
      if (p.tenant === tenant && p.sessionId === sessionId) listener(viewOf(p));
    });
  }

  /** Answers an ask of `tenant`; NotFoundError when the tenant has no pending ask with that id. */
  decide(tenant: string, id: string, decision: ApprovalDecision): void {
    if (!this.provider.pending({ tenant }).some((p) => p.id === id)) {
      throw new NotFoundError(`Approval '${id}' not found. List pending approvals with GET /v1/approvals.`);
    }
    this.provider.answer(id, decision === "allow" ? "allow-once" : decision);
  }
}
