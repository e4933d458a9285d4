/**
 * The controller's end of the gateway's secret questions (images/gateway/secrets.go). For a
 * session that has secrets, the gateway looks at every request (not a CONNECT): with no
 * placeholder in the path or the checked headers it goes on, and otherwise it sends
 * `WARDEN-SECRET <id> <method> <host> <port> <path> <header 0> … <header n-1>` on its stdout,
 * each field percent-encoded (`-` for a header the request lacks;
 * the headers are secretHeaderNames' in order). SecretRelay decides (decideSecretUse) and answers
 * on stdin: `WARDEN-SECRET-ANSWER <id> OK warden_secret_<i>="<new value>" … warden_secret=use.<NAMES>`
 * or `WARDEN-SECRET-ANSWER <id> ERR warden_secret=<reason>.<NAME>`. The gateway puts each
 * `warden_secret_<i>` into header i of the request it forwards (replacing the original), or
 * refuses the request (403), and records `warden_secret` (names, never values) as the record's
 * `secret`. Each decision also goes to `onSecretUse` as a SecretUseAudit.
 */
import { decideSecretUse, secretValueProblem } from "./secret-decision.js";
import type { SecretDecision, SessionSecret } from "./secrets.js";
import type { SecretUseAudit } from "./types.js";

const QUESTION = /^WARDEN-SECRET (s[0-9a-f]{1,40}) (.*)$/;
const ANSWER_PREFIX = "WARDEN-SECRET-ANSWER";

/** Options of SecretRelay. */
export interface SecretRelayOptions {
  sessionId: string;
  secrets: readonly SessionSecret[];
  /** The header names the gateway sends, in its order (secretHeaderNames of the same secrets). */
  headerNames: readonly string[];
  /** Writes an answer line to the gateway's stdin. */
  write: (line: string) => void;
  onSecretUse?: (record: SecretUseAudit) => void;
}

function decode(field: string | undefined): string | undefined {
  if (field === undefined || field === "-") return undefined;
  try {
    return decodeURIComponent(field);
  } catch {
    return field;
  }
}

/** The answer line for a decision (newline included): values only ever in the pairs for the gateway. */
export function formatSecretAnswer(
  id: string,
  decision: SecretDecision,
  headerNames: readonly string[],
): string {
  // decideSecretUse lets only visible ASCII and space without `"` or `\` through; this is the last
  // line before the gateway's stdin, so check again: a line break here would be a forged answer.
  if (
    decision.verdict === "replace" &&
    Object.values(decision.headers).some((v) => secretValueProblem(v) !== null)
  )
    return `${ANSWER_PREFIX} ${id} ERR warden_secret=bad-header.-\n`;
  if (decision.verdict === "refuse")
    return `${ANSWER_PREFIX} ${id} ERR warden_secret=${decision.reason}.${decision.secret}\n`;
  const pairs = headerNames.flatMap((name, i) => {
    const value = decision.headers[name];
    return value === undefined ? [] : [`warden_secret_${i}="${value}"`];
  });
  const used = decision.used.length > 0 ? ` warden_secret=use.${decision.used.join(".")}` : "";
  return `${ANSWER_PREFIX} ${id} OK${pairs.length ? ` ${pairs.join(" ")}` : ""}${used}\n`;
}

/** Answers the gateway's secret questions (see module doc). After `close` every question is refused. */
export class SecretRelay {
  private closed = false;

  constructor(private readonly options: SecretRelayOptions) {}

  /** Handles one stdout line of the gateway; false when it is not a secret question. */
  handle(line: string): boolean {
    const m = QUESTION.exec(line.trim());
    if (!m) return false;
    void this.answer(m[1] as string, (m[2] as string).split(" "));
    return true;
  }

  private async answer(id: string, fields: string[]): Promise<void> {
    const [method, host, port, path, ...values] = fields.map(decode);
    const request = {
      method: (method ?? "").toUpperCase(),
      host: (host ?? "").toLowerCase(),
      port: Number(port) || 0,
      path: path ?? "/",
      headers: this.options.headerNames.flatMap((name, i): Array<[string, string]> => {
        const value = values[i];
        return value === undefined ? [] : [[name, value]];
      }),
    };
    const decision: SecretDecision = this.closed
      ? { verdict: "refuse", reason: "revoked", secret: "-" }
      : await decideSecretUse(request, this.options.secrets).catch(
          () => ({ verdict: "refuse", reason: "revoked", secret: "-" }) as const,
        );
    this.options.write(formatSecretAnswer(id, decision, this.options.headerNames));
    // A `{{…}}` that names no placeholder pattern passes unchanged and is not a use.
    if (decision.verdict === "replace" && decision.used.length === 0) return;
    this.options.onSecretUse?.({
      sessionId: this.options.sessionId,
      time: new Date().toISOString(),
      secrets: decision.verdict === "replace" ? decision.used : [decision.secret],
      decision: decision.verdict === "replace" ? "use" : "refuse",
      ...(decision.verdict === "refuse" ? { reason: decision.reason } : {}),
      host: request.host,
      port: request.port,
      method: request.method,
      path: request.path.split("?")[0] ?? "/",
    });
  }

  /** Refuses every later question (the session is closing). */
  close(): void {
    this.closed = true;
  }
}
