/**
 * Parses the gateway's access-log lines (the `warden` logformat of squid-config.ts) into
 * ConnectionAudit records (pure). A line is
 * `WARDEN-AUDIT <epoch.ms> <method> <domain> <port> <squid status>/<http status> <bytes from client>
 * <bytes to client> <duration ms> <sni or -> <server address or -> <ssl bump mode or -> <ask outcome or ->
 * <secret note or ->` (the `warden_ask` note of the ask helper's answer, ask-relay.ts, and the
 * `warden_secret` note of the secret relay's, secret-relay.ts: `use.<NAME>…` or `<reason>.<NAME>`;
 * a gateway of an older warden logs 13 fields, without it).
 * Squid logs a request or tunnel when it ends. A TLS tunnel the gateway opens to check the requests
 * inside (squid-config.ts) is logged when it is opened (`NONE_NONE/200 … bump`: the tunnel's
 * record, with the bytes of the CONNECT exchange only) and then once per request inside it, with
 * method, host, the tunnel's SNI and that request's bytes; a tunnel Squid terminated
 * (SNI ≠ CONNECT host) once, as `… terminate`; a refused CONNECT as `TCP_DENIED` (and its error
 * page, served inside the tunnel, as `NONE_NONE/403`, skipped here). A gateway of an
 * older warden spliced tunnels: `NONE_NONE … splice` when it peeked (skipped here), then
 * `TCP_TUNNEL … splice` with the tunnel's bytes.
 */
import { askAllowed } from "./ask-relay.js";
import { decideConnection } from "./host-pattern.js";
import { AUDIT_PREFIX } from "./squid-config.js";
import type { AskOutcome, ConnectionAudit, GatewayRefusal, NetworkRule } from "./types.js";

const FIELDS = 14;

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

/** Why a connection under an ask rule was refused, for its audit rule text. */
function askRefusal(outcome: AskOutcome | undefined, timeoutMs: number): string {
  if (outcome === "denied") return "denied by the approver";
  if (outcome === "timeout") return `no answer within ${timeoutMs} ms`;
  if (outcome === "non-interactive") return "nobody to ask: non-interactive";
  return outcome ? `not approved: ${outcome}` : "not approved";
}

/**
 * One record from one line, or null for a line that is not a whole audit line (or is the peek
 * step of a tunnel logged again when it ends, or the error page of a refused tunnel). The decision is `allow` only when Squid forwarded
 * the request (a 2xx-5xx from the origin, not TCP_DENIED) or opened (or spliced) the tunnel. The rule is the
 * one decideConnection names; when the gateway refused a connection a rule let through, the
 * refusal's reason is given with it: `sni-mismatch (…)` (a tunnel's SNI is not its CONNECT host, or
 * it has none: a tunnel carrying plain HTTP, not TLS),
 * `host-sni-mismatch (…)` (a request inside an opened tunnel names another host than its SNI; the
 * rule is the request host's), `upstream-tls (…)` (the gateway's TLS connection to the origin
 * failed) or `refused-address (…)` (the name resolved to a refused address); an IP literal is
 * `ip-literal`. Under an ask rule the decision is
 * `ask→allow` or `ask→deny` with `ask` (the outcome) and, when refused, why:
 * `ask x:443 (no answer within 300000 ms)` (`askTimeoutMs`, default 300000).
 */
export function parseAccessLine(
  line: string,
  sessionId: string,
  rules: readonly NetworkRule[],
  askTimeoutMs = 300_000,
): ConnectionAudit | null {
  const parts = line.trim().split(/\s+/);
  if (parts[0] !== AUDIT_PREFIX || (parts.length !== FIELDS && parts.length !== FIELDS - 1)) return null;
  const [
    ,
    ts,
    method,
    rawDomain,
    rawPort,
    status,
    inBytes,
    outBytes,
    tr,
    sni,
    remote,
    bump,
    note,
    secretNote,
  ] = parts as [string, ...string[]] as string[];
  const squidStatus = (status ?? "").split("/")[0] ?? "";
  const tunnel = method === "CONNECT";
  if (tunnel && squidStatus === "NONE_NONE" && bump === "splice") return null;
  const domain = (rawDomain ?? "").replace(/^\[|\]$/g, "").toLowerCase();
  const port = Number(rawPort) || (tunnel ? 443 : 80);
  const forwarded = tunnel
    ? (squidStatus === "TCP_TUNNEL" && bump === "splice") || (squidStatus === "NONE_NONE" && bump === "bump")
    : !squidStatus.startsWith("TCP_DENIED") && !squidStatus.startsWith("NONE") && remote !== "-";
  const sniName = sni && sni !== "-" ? sni.toLowerCase() : undefined;
  // A request inside a tunnel the gateway opened carries the tunnel's SNI.
  const inTunnel = !tunnel && sniName !== undefined;
  // Squid opens a refused tunnel too, only to answer its first request with the error page
  // (`NONE_NONE/403`, no origin contacted): the tunnel's own record already says why.
  if (inTunnel && status === "NONE_NONE/403") return null;
  const verdict = decideConnection(rules, domain, port);
  // A tunnel checked twice may carry both answers' notes (`once,once`): the last one decided.
  const lastNote = note?.split(",").at(-1);
  const ask = lastNote && OUTCOMES.has(lastNote) ? (lastNote as AskOutcome) : undefined;
  const approved = ask !== undefined && askAllowed(ask);
  let rule = verdict.rule;
  let decision: ConnectionAudit["decision"] = forwarded ? "allow" : "deny";
  let refusal: GatewayRefusal | undefined;
  const secret = parseSecretNote(secretNote);
  if (isIpLiteral(domain)) rule = "ip-literal";
  else if (secret?.refused) {
    refusal = "secret";
    rule = `secret ${secret.refused} (${verdict.rule})`;
  } else if (ask && !approved) {
    decision = "ask→deny";
    rule = `${verdict.rule} (${askRefusal(ask, askTimeoutMs)})`;
  } else if (!forwarded && inTunnel && sniName !== domain)
    // A request inside an opened tunnel for another host than the tunnel's SNI (domain fronting).
    refusal = "host-sni-mismatch";
  else if (!forwarded && verdict.decision !== "deny")
    refusal = gatewayRefusal(tunnel, squidStatus, bump, inTunnel);
  else if (forwarded && approved) decision = "ask→allow";
  if (refusal && refusal !== "secret") rule = `${refusal} (${verdict.rule})`;
  const record: ConnectionAudit = {
    sessionId,
    time: new Date(Math.round(Number(ts) * 1000)).toISOString(),
    domain,
    port,
    method: method ?? "",
    decision,
    ...(ask ? { ask } : {}),
    rule,
    ...(refusal ? { refusal } : {}),
    bytesOut: Number(inBytes) || 0,
    bytesIn: Number(outBytes) || 0,
    durationMs: Number(tr) || 0,
  };
  if (secret) record.secrets = secret.names;
  if (sniName !== undefined) record.sni = sniName;
  if (inTunnel) record.insideTunnel = true;
  if (forwarded && remote && remote !== "-") record.remoteAddress = remote;
  return record;
}

/**
 * Why the gateway refused a connection its rule (or its approver) let through: a tunnel whose SNI
 * is not its CONNECT host, either naming another host (`terminate`) or missing because the tunnel
 * carries no TLS at all (peeked, `NONE_NONE`: plain HTTP inside a CONNECT, or nothing); inside an
 * opened tunnel the gateway's own TLS connection to the origin (a certificate no trusted CA
 * signed, or no connection); or a name resolving to a refused address (`TCP_DENIED`: never asked about).
 */
function gatewayRefusal(
  tunnel: boolean,
  squidStatus: string,
  bump: string | undefined,
  inTunnel: boolean,
): GatewayRefusal {
  if (bump === "terminate") return "sni-mismatch";
  if (tunnel && squidStatus === "NONE_NONE" && bump === "peek") return "sni-mismatch";
  return inTunnel ? "upstream-tls" : "refused-address";
}

/**
 * The `warden_secret` note: `use.A.B` (the secrets whose values went out) or `<reason>.<NAME>` (a
 * refusal: unbound, not-in-bound-header, unknown, revoked, bad-value, or the gateway's own
 * no-controller, gateway-timeout, no-relay with NAME `-`). Several answers of one request are
 * joined by `,`: the last decided.
 */
function parseSecretNote(note: string | undefined): { names: string[]; refused?: string } | undefined {
  const last = note && note !== "-" ? note.split(",").at(-1) : undefined;
  const m = last ? /^([a-z-]{1,32})((?:\.[A-Z][A-Z0-9_]{0,63}|\.-)+)$/.exec(last) : null;
  if (!m) return undefined;
  const names = (m[2] as string)
    .slice(1)
    .split(".")
    .filter((n) => n !== "-");
  return m[1] === "use"
    ? { names }
    : { names, refused: `${m[1]}${names.length ? ` ${names.join(" ")}` : ""}` };
}

function isIpLiteral(domain: string): boolean {
  return /^[0-9.]+$/.test(domain) || domain.includes(":");
}
