/**
 * Pending approvals of `ask` decisions, answered over HTTP (GET /v1/approvals, POST /v1/approvals/:id).
 * A tenant-scoped view over src/approval's ProgrammaticApproval, which the policy hook of every
 * session asks: each request carries its tenant, and another tenant can neither list nor answer it
 * (NotFoundError, 404, the same as an unknown id). Unanswered requests are denied by the policy hook
 * on its timeout or when the call is aborted (fail closed). Each answered or abandoned ask is one
 * `kind: "approval"` audit line: its call, answer, wait and the API key that answered.
 */
import { type PendingApproval, ProgrammaticApproval } from "../../approval/index.js";
import { NotFoundError } from "../../errors.js";
import type {
  ApprovalAnswer,
  ApprovalProvider,
  ApprovalRequest,
  PolicyDecisionKind,
} from "../../policy/index.js";
import type { ServerAuditLog } from "../audit.js";
import type { RunningCalls } from "./running-calls.js";

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
  /** Give this to createPolicyHook as `approval` (and to the egress ask): the asks it writes audit lines of. */
  readonly provider: ApprovalProvider;
  private readonly pending = new ProgrammaticApproval();
  /** The API key id that answered each ask, by approval id, until its audit line is written. */
  private readonly answeredBy = new Map<string, string>();

  /**
   * `audit` gets one approval line per ask of a session; `calls` gives the batch of the call that
   * asked (or, for a connection, the call running when it was asked).
   */
  constructor(
    private readonly audit?: ServerAuditLog,
    private readonly calls?: RunningCalls,
  ) {
    this.provider = { interactive: true, request: (req) => this.request(req) };
  }

  /** The tenant's pending asks, oldest first. */
  list(tenant: string): ApprovalView[] {
    return this.pending.pending({ tenant }).map(viewOf);
  }

  /**
   * Calls `listener` with each new ask of `tenant`'s session `sessionId` (the SSE stream of a batch
   * announces them as `approval_requested`); returns the function that stops it.
   */
  watch(tenant: string, sessionId: string, listener: (view: ApprovalView) => void): () => void {
    return this.pending.onRequest((p) => {
      if (p.tenant === tenant && p.sessionId === sessionId) listener(viewOf(p));
    });
  }

  /**
   * Answers an ask of `tenant`, given by the API key `who` (its id, for the audit line);
   * NotFoundError when the tenant has no pending ask with that id.
   */
  decide(tenant: string, id: string, decision: ApprovalDecision, who?: string): void {
    if (!this.pending.pending({ tenant }).some((p) => p.id === id)) {
      throw new NotFoundError(`Approval '${id}' not found. List pending approvals with GET /v1/approvals.`);
    }
    if (who !== undefined) this.answeredBy.set(id, who);
    this.pending.answer(id, decision === "allow" ? "allow-once" : decision);
  }

  /** Asks through the pending list, then writes the ask's audit line (`who`: `unanswered` when nobody answered). */
  private async request(req: ApprovalRequest): Promise<ApprovalAnswer> {
    const askedMs = Date.now();
    // The pending list announces the new ask synchronously inside request(): that is its id.
    let id: string | undefined;
    const stop = this.pending.onRequest((p) => {
      id ??= p.id;
    });
    const answered = this.pending.request(req);
    stop();
    const answer = await answered;
    const who = (id !== undefined && this.answeredBy.get(id)) || "unanswered";
    if (id !== undefined) this.answeredBy.delete(id);
    const { tenant, sessionId: session } = req;
    if (this.audit && tenant && session) {
      const batch = req.toolCallId ? this.calls?.batchOf(session, req.toolCallId) : undefined;
      const link = req.toolCallId
        ? { toolCallId: req.toolCallId, ...(batch ? { batch } : {}) }
        : (this.calls?.at(session, askedMs) ?? {});
      this.audit.write({
        kind: "approval",
        tenant,
        session,
        ...link,
        tool: req.tool,
        answer,
        waitMs: Date.now() - askedMs,
        who,
        ...(req.network ? { network: { ...req.network } } : {}),
      });
    }
    return answer;
  }
}
