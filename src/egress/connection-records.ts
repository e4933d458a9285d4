/**
 * Parses the gateway's connection records into ConnectionAudit records (pure). The gateway
 * (images/gateway, record.go) writes one `WARDEN-CONN <json>` line on its stdout per CONNECT
 * tunnel (when it is opened, or refused), per request inside an opened tunnel and per plain-HTTP
 * request (when it ends), and one (method and host `-`) per connection that closed before sending
 * a request: `{time (ms since the epoch), method, host, port, sni?, inside?,
 * forwarded, status, refusal?, ask?, secret?, bytesOut, bytesIn, durationMs, remote?}`. The
 * gateway says what happened (forwarded or not, which of its own checks refused); the rule that
 * decided is named here, from the same rules (decideConnection).
 */
import { askAllowed } from "./ask-relay.js";
import { decideConnection, isIpLiteral } from "./host-pattern.js";
import type { AskOutcome, ConnectionAudit, GatewayRefusal, NetworkRule } from "./types.js";

/** The marker that starts every connection record line. */
const CONNECTION_PREFIX = "WARDEN-CONN";

const OUTCOMES: ReadonlySet<string> = new Set<AskOutcome>([
  "once",
  "session",
  "cached",
  "denied",
  "timeout",
  "non-interactive",
  "closed",
  "no-controller",
  "gateway-timeout",
  "no-relay",
  "bad-question",
]);

const REFUSALS: ReadonlySet<string> = new Set<GatewayRefusal>([
  "sni-mismatch",
  "host-sni-mismatch",
  "upstream-tls",
  "refused-address",
  "unreachable",
  "method",
  "secret",
]);

/** One record as the gateway writes it. */
interface GatewayRecord {
  seq?: number;
  time: number;
  method: string;
  host: string;
  port: number;
  sni?: string;
  inside?: boolean;
  forwarded: boolean;
  status: number;
  refusal?: string;
  ask?: string;
  secret?: string;
  bytesOut: number;
  bytesIn: number;
  durationMs: number;
  remote?: string;
}

function parseRecord(line: string): GatewayRecord | null {
  const text = line.trim();
  if (!text.startsWith(`${CONNECTION_PREFIX} {`)) return null;
  let value: unknown;
  try {
    value = JSON.parse(text.slice(CONNECTION_PREFIX.length + 1));
  } catch {
    return null;
  }
  const r = value as Partial<GatewayRecord> | null;
  if (!r || typeof r !== "object") return null;
  const numbers = [r.time, r.port, r.status, r.bytesOut, r.bytesIn, r.durationMs];
  if (numbers.some((n) => typeof n !== "number" || !Number.isFinite(n))) return null;
  if (typeof r.method !== "string" || typeof r.host !== "string" || typeof r.forwarded !== "boolean")
    return null;
  return r as GatewayRecord;
}

/** Why a connection under an ask rule was refused, for its audit rule text. */
function askRefusal(outcome: AskOutcome, timeoutMs: number): string {
  if (outcome === "denied") return "denied by the approver";
  if (outcome === "timeout") return `no answer within ${timeoutMs} ms`;
  if (outcome === "non-interactive") return "nobody to ask: non-interactive";
  return `not approved: ${outcome}`;
}

/**
 * One ConnectionAudit from one line, or null for a line that is not a whole record. The decision
 * is `allow` when the gateway forwarded the request (or opened the tunnel); under an ask rule
 * `ask→allow` / `ask→deny` with `ask` (the outcome) and, when refused, why:
 * `ask x:443 (no answer within 300000 ms)` (`askTimeoutMs`, default 300000). The rule is the one
 * decideConnection names; when the gateway refused what a rule let through, the refusal's reason
 * is given with it (`refused-address (allow x:80+443)`), and a placeholder where it may not go is
 * `secret <reason> <NAME> (…)`; an IP literal is `ip-literal`.
 */
export function parseConnectionLine(
  line: string,
  sessionId: string,
  rules: readonly NetworkRule[],
  askTimeoutMs = 300_000,
): ConnectionAudit | null {
  return parseConnectionRecord(line, sessionId, rules, askTimeoutMs)?.audit ?? null;
}

/**
 * parseConnectionLine with the record's sequence number (`seq`, from 1 per gateway; 0 when
 * absent), which the controller acknowledges (gateway-stdio.ts).
 */
export function parseConnectionRecord(
  line: string,
  sessionId: string,
  rules: readonly NetworkRule[],
  askTimeoutMs = 300_000,
): { audit: ConnectionAudit; seq: number } | null {
  const r = parseRecord(line);
  if (!r) return null;
  return { audit: toAudit(r, sessionId, rules, askTimeoutMs), seq: typeof r.seq === "number" ? r.seq : 0 };
}

function toAudit(
  r: GatewayRecord,
  sessionId: string,
  rules: readonly NetworkRule[],
  askTimeoutMs: number,
): ConnectionAudit {
  const domain = r.host.replace(/^\[|\]$/g, "").toLowerCase();
  const verdict = decideConnection(rules, domain, r.port);
  const ask = r.ask && OUTCOMES.has(r.ask) ? (r.ask as AskOutcome) : undefined;
  const approved = ask !== undefined && askAllowed(ask);
  const secret = parseSecretNote(r.secret);
  let refusal = r.refusal && REFUSALS.has(r.refusal) ? (r.refusal as GatewayRefusal) : undefined;
  let decision: ConnectionAudit["decision"] = r.forwarded ? "allow" : "deny";
  let rule = verdict.rule;
  if (isIpLiteral(domain)) {
    rule = "ip-literal";
    refusal = undefined;
  } else if (refusal === "secret") rule = `secret ${secret?.refused ?? "-"} (${verdict.rule})`;
  else if (ask && !approved) {
    decision = "ask→deny";
    rule = `${verdict.rule} (${askRefusal(ask, askTimeoutMs)})`;
  } else if (refusal) rule = `${refusal} (${verdict.rule})`;
  else if (r.forwarded && approved) decision = "ask→allow";
  const sni = typeof r.sni === "string" && r.sni !== "" ? r.sni.toLowerCase() : undefined;
  return {
    sessionId,
    time: new Date(r.time).toISOString(),
    domain,
    port: r.port,
    method: r.method,
    ...(sni !== undefined ? { sni } : {}),
    ...(r.inside === true ? { insideTunnel: true as const } : {}),
    decision,
    ...(ask ? { ask } : {}),
    rule,
    ...(refusal ? { refusal } : {}),
    bytesOut: r.bytesOut,
    bytesIn: r.bytesIn,
    durationMs: r.durationMs,
    ...(r.forwarded && typeof r.remote === "string" && r.remote !== "" ? { remoteAddress: r.remote } : {}),
    ...(secret ? { secrets: secret.names } : {}),
  };
}

/**
 * The secret note: `use.A.B` (the secrets whose values went out) or `<reason>.<NAME>` (a refusal:
 * unbound, not-in-bound-header, unknown, revoked, bad-value, or the gateway's own no-controller,
 * gateway-timeout with NAME `-`).
 */
function parseSecretNote(note: string | undefined): { names: string[]; refused?: string } | undefined {
  const m = note ? /^([a-z-]{1,32})((?:\.[A-Z][A-Z0-9_]{0,63}|\.-)+)$/.exec(note) : null;
  if (!m) return undefined;
  const names = (m[2] as string)
    .slice(1)
    .split(".")
    .filter((n) => n !== "-");
  return m[1] === "use"
    ? { names }
    : { names, refused: `${m[1]}${names.length ? ` ${names.join(" ")}` : ""}` };
}
