/**
 * What the policy hook needs from whoever answers when the policy says `ask` (the providers live in
 * src/approval: terminal, programmatic, non-interactive; src/mcp has elicitation). A timeout means deny.
 */
import type { Decision } from "./types.js";

/**
 * The answer to one request. `allow-session` also allows the same parts for the rest of the
 * session: exactly the parts that asked, by TrailEntry.approvalScope (same tool and argv or path;
 * the identical command for a part that depends on the rest of the script). Anything else asks again.
 */
export type ApprovalAnswer = "allow-once" | "allow-session" | "deny";

/** One request for approval: the call and the decision that asked (its rule, part and trail). */
export interface ApprovalRequest {
  tool: string;
  args: unknown;
  decision: Decision;
  /** Fires when the request is no longer wanted (call aborted, timeout); providers answer deny. */
  signal: AbortSignal;
  /** The tool call that waits for the answer. */
  toolCallId?: string;
  sessionId?: string;
  /** Who owns the session (server: the API key's owner) and its tenant; for programmatic approvers. */
  owner?: string;
  tenant?: string;
  /**
   * Set when the request is a network connection under an `ask` rule (network-approval.ts), not a
   * tool call: the host and port the sandbox connects to and the rule that asked. `tool` is then
   * `network` and `args` is `{ host, port }`.
   */
  network?: NetworkApprovalSubject;
}

/** The connection a network approval request is about. */
export interface NetworkApprovalSubject {
  host: string;
  port: number;
  /** The `ask` rule as audit lines name it (`ask pypi.org:443`). */
  rule: string;
}

/** Something that answers approval requests. */
export interface ApprovalProvider {
  /** False for providers that never ask anyone (decider `non-interactive`). Default true. */
  readonly interactive?: boolean;
  /**
   * Why nobody can be asked, when `interactive` is false: replaces "this session is non-interactive"
   * in the refusal text (e.g. the MCP client does not support elicitation).
   */
  readonly nonInteractiveReason?: string;
  /** Resolves with the answer; resolves `deny` (never rejects) when `req.signal` fires. */
  request(req: ApprovalRequest): Promise<ApprovalAnswer>;
}
