/**
 * The approval provider for programs (the HTTP server): each request waits in a pending list,
 * tagged with its session, owner and tenant, until someone answers it by id. An aborted request
 * (timeout, cancelled call) leaves the list and answers deny.
 */
import { randomUUID } from "node:crypto";
import { NotFoundError } from "../errors.js";
import type {
  ApprovalAnswer,
  ApprovalProvider,
  ApprovalRequest,
  Decision,
  NetworkApprovalSubject,
} from "../policy/index.js";
import { omitUndefined } from "../util/index.js";

/** A request waiting for an answer, as listed to approvers. `createdAt` is epoch ms. */
export interface PendingApproval {
  id: string;
  tool: string;
  args: unknown;
  decision: Decision;
  toolCallId?: string;
  sessionId?: string;
  owner?: string;
  tenant?: string;
  /** Set for a network connection under an `ask` rule (ApprovalRequest.network). */
  network?: NetworkApprovalSubject;
  createdAt: number;
}

/** Holds pending requests; `answer(id, ...)` resolves one. */
export class ProgrammaticApproval implements ApprovalProvider {
  readonly interactive = true;
  private readonly listeners = new Set<(item: PendingApproval) => void>();
  private readonly waiting = new Map<
    string,
    { item: PendingApproval; resolve: (a: ApprovalAnswer) => void }
  >();

  request(req: ApprovalRequest): Promise<ApprovalAnswer> {
    if (req.signal.aborted) return Promise.resolve("deny");
    const item: PendingApproval = {
      id: randomUUID(),
      tool: req.tool,
      args: req.args,
      decision: req.decision,
      ...(req.toolCallId ? { toolCallId: req.toolCallId } : {}),
      ...omitUndefined({ sessionId: req.sessionId, owner: req.owner, tenant: req.tenant }),
      ...(req.network ? { network: req.network } : {}),
      createdAt: Date.now(),
    };
    const answered = new Promise<ApprovalAnswer>((resolve) => {
      const onAbort = () => {
        this.waiting.delete(item.id);
        resolve("deny");
      };
      req.signal.addEventListener("abort", onAbort, { once: true });
      this.waiting.set(item.id, {
        item,
        resolve: (answer) => {
          req.signal.removeEventListener("abort", onAbort);
          this.waiting.delete(item.id);
          resolve(answer);
        },
      });
    });
    for (const listener of this.listeners) listener(item);
    return answered;
  }

  /** Calls `listener` with each new pending request; returns the function that stops it. */
  onRequest(listener: (item: PendingApproval) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Pending requests, oldest first; filter by owner and/or tenant (server: only the caller's own). */
  pending(filter: { owner?: string; tenant?: string; sessionId?: string } = {}): PendingApproval[] {
    return [...this.waiting.values()]
      .map((w) => w.item)
      .filter(
        (i) =>
          (filter.owner === undefined || i.owner === filter.owner) &&
          (filter.tenant === undefined || i.tenant === filter.tenant) &&
          (filter.sessionId === undefined || i.sessionId === filter.sessionId),
      )
      .sort((a, b) => a.createdAt - b.createdAt);
  }

  /** Answers a pending request. Throws NotFoundError when no request has that id (answered, timed out). */
  answer(id: string, answer: ApprovalAnswer): void {
    const waiting = this.waiting.get(id);
    if (!waiting)
      throw new NotFoundError(`No pending approval request '${id}' (already answered or timed out).`);
    waiting.resolve(answer);
  }
}
