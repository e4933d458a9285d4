/**
 * The controller's end of the gateway's `ask` questions (images/gateway/controller.go). The
 * gateway's stdout carries, between its connection records, one question per check of a connection to a
 * domain under an `ask` rule: `WARDEN-ASK <id> <host> <port> [<connection id>]`; its stdin takes one
 * answer per question:
 * `WARDEN-ANSWER <id> OK|ERR <outcome>` (AskOutcome). AskRelay asks the session's approver, at most
 * `timeoutMs`, and remembers an "allow for the session" answer by exactly host and port. The
 * gateway holds the connection until the answer arrives, and records the outcome. It asks once
 * per CONNECT and per plain-HTTP request; a second question about the same connection (the
 * gateway's id of it) for the same host and port within REPEAT_WINDOW_MS (a client that sends its
 * requests on one kept-alive connection) gets the first one's allowing answer without asking again.
 */
import { decideConnection } from "./host-pattern.js";
import type { AskOutcome, NetworkApprovalAnswer, NetworkApprovalRequest, NetworkRule } from "./types.js";

/** Marker of an answer line on the gateway's stdin. */
const ANSWER_PREFIX = "WARDEN-ANSWER";
/** Default time an approver has to answer a connection (5 minutes, as for tool calls). */
export const DEFAULT_NETWORK_APPROVAL_TIMEOUT_MS = 300_000;
/** The gateway's own backstop is the controller's timeout plus this margin (the controller answers first). */
export const GATEWAY_DEADLINE_MARGIN_MS = 10_000;

/** How long an allowing answer covers a repeated check of the same connection (ms). */
const REPEAT_WINDOW_MS = 30_000;

/** Outcomes that let the connection through. */
const ALLOWED: ReadonlySet<AskOutcome> = new Set(["once", "session", "cached"]);

/** True when `outcome` let the connection through. */
export function askAllowed(outcome: AskOutcome): boolean {
  return ALLOWED.has(outcome);
}

/** One question from the gateway. */
export interface AskQuestion {
  /** The gateway's id of the question (`q` and hex digits the sandbox cannot guess; `q1` from an older gateway). */
  id: string;
  host: string;
  port: number;
  /**
   * The gateway's id of the sandbox's connection the question is about (unique per gateway, never
   * chosen by the sandbox), when the gateway sent it.
   */
  connection?: string;
}

const QUESTION =
  /^WARDEN-ASK (q[0-9a-f]{1,40}) ([a-z0-9.-]{1,253}|\[[0-9a-f:.]{2,45}\]|[0-9a-f:.]{2,45}) ([0-9]{1,5})(?: ([0-9]{1,20}))?$/i;

/** Parses a question line, or null for any other line (a malformed question is not one). */
export function parseAskQuestion(line: string): AskQuestion | null {
  const m = QUESTION.exec(line.trim());
  if (!m) return null;
  const port = Number(m[3]);
  if (port < 1 || port > 65535) return null;
  const question: AskQuestion = { id: m[1] as string, host: (m[2] as string).toLowerCase(), port };
  if (m[4] !== undefined) question.connection = m[4];
  return question;
}

/** The answer line for a question (newline included). */
export function formatAskAnswer(id: string, outcome: AskOutcome): string {
  return `${ANSWER_PREFIX} ${id} ${askAllowed(outcome) ? "OK" : "ERR"} ${outcome}\n`;
}

/** The outcome of an approver's answer. */
function outcomeOf(answer: NetworkApprovalAnswer): AskOutcome {
  if (answer === "allow-once") return "once";
  if (answer === "allow-session") return "session";
  if (answer === "non-interactive") return "non-interactive";
  return "denied";
}

/** Options of AskRelay. */
export interface AskRelayOptions {
  sessionId: string;
  rules: readonly NetworkRule[];
  /** The approver; absent: every question is answered `non-interactive` (deny). */
  approve?: (request: NetworkApprovalRequest) => Promise<NetworkApprovalAnswer>;
  /** Default DEFAULT_NETWORK_APPROVAL_TIMEOUT_MS. */
  timeoutMs?: number;
  /** Writes an answer line to the gateway's stdin. */
  write: (line: string) => void;
}

/** Answers the gateway's questions (see module doc). `close` answers every open question `closed`. */
export class AskRelay {
  private readonly allowedForSession = new Set<string>();
  /** Allowing answers by `<client port> <host>:<port>`, with their time (performance.now ms). */
  private readonly recent = new Map<string, { outcome: AskOutcome; atMs: number }>();
  private readonly open = new Map<string, AbortController>();
  private closed = false;
  readonly timeoutMs: number;

  constructor(private readonly options: AskRelayOptions) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_NETWORK_APPROVAL_TIMEOUT_MS;
  }

  /** Handles one stdout line of the gateway; false when it is not a question. */
  handle(line: string): boolean {
    const question = parseAskQuestion(line);
    if (!question) return false;
    void this.answer(question);
    return true;
  }

  /** Answers one question: from the session's allowances, else by asking (at most timeoutMs). */
  async answer(question: AskQuestion): Promise<AskOutcome> {
    const outcome = await this.decide(question);
    if (!this.closed || outcome === "closed") this.options.write(formatAskAnswer(question.id, outcome));
    return outcome;
  }

  private async decide(q: AskQuestion): Promise<AskOutcome> {
    if (this.closed) return "closed";
    const key = `${q.host}:${q.port}`;
    const connection = q.connection === undefined ? undefined : `${q.connection} ${key}`;
    const now = performance.now();
    for (const [k, v] of this.recent) if (now - v.atMs > REPEAT_WINDOW_MS) this.recent.delete(k);
    const earlier = connection === undefined ? undefined : this.recent.get(connection);
    if (earlier) return earlier.outcome;
    const outcome = await this.ask(q, key);
    if (connection !== undefined && askAllowed(outcome))
      this.recent.set(connection, { outcome, atMs: performance.now() });
    return outcome;
  }

  private async ask(q: AskQuestion, key: string): Promise<AskOutcome> {
    if (this.allowedForSession.has(key)) return "cached";
    const verdict = decideConnection(this.options.rules, q.host, q.port);
    // The gateway asks only under an ask rule; anything else is a question it should not have sent.
    if (verdict.decision !== "ask") return "bad-question";
    const approve = this.options.approve;
    if (!approve) return "non-interactive";
    const controller = new AbortController();
    this.open.set(q.id, controller);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<AskOutcome>((resolve) => {
      timer = setTimeout(() => {
        controller.abort();
        resolve("timeout");
      }, this.timeoutMs);
    });
    const ended = new Promise<AskOutcome>((resolve) =>
      controller.signal.addEventListener("abort", () => resolve(this.closed ? "closed" : "timeout"), {
        once: true,
      }),
    );
    const asked = approve({
      sessionId: this.options.sessionId,
      host: q.host,
      port: q.port,
      rule: verdict.rule,
      signal: controller.signal,
    }).then(outcomeOf, () => "denied" as const);
    try {
      const outcome = await Promise.race([asked, timedOut, ended]);
      if (outcome === "session") this.allowedForSession.add(key);
      return outcome;
    } finally {
      clearTimeout(timer);
      this.open.delete(q.id);
      controller.abort();
    }
  }

  /** Stops asking: open questions are aborted and answered `closed` (deny). Idempotent. */
  close(): void {
    this.closed = true;
    for (const c of this.open.values()) c.abort();
  }
}
