/**
 * Parses the gateway's access-log lines (the `warden` logformat of squid-config.ts) into
 * ConnectionAudit records (pure). A line is
 * `WARDEN-AUDIT <epoch.ms> <method> <domain> <port> <squid status>/<http status> <bytes from client>
 * <bytes to client> <duration ms> <sni or -> <server address or -> <ssl bump mode or ->`.
 * Squid logs a request or tunnel when it ends. A TLS tunnel is logged twice when it is spliced:
 * once when the ClientHello was peeked at (`NONE_NONE … splice`, skipped here) and once with the
 * tunnel's bytes (`TCP_TUNNEL … splice`); a tunnel Squid terminated (SNI ≠ CONNECT host) once,
 * as `… terminate`; a refused CONNECT as `TCP_DENIED`.
 */
import { decideConnection } from "./host-pattern.js";
import { AUDIT_PREFIX } from "./squid-config.js";
import type { ConnectionAudit, NetworkRule } from "./types.js";

const FIELDS = 12;

/**
 * One record from one line, or null for a line that is not a whole audit line (or is the peek
 * step of a tunnel logged again when it ends). The decision is `allow` only when Squid forwarded
 * the request (a 2xx-5xx from the origin, not TCP_DENIED) or spliced the tunnel. The rule is the
 * one decideConnection names; when the gateway refused a connection a rule let through, the
 * refusal's reason is given with it: `sni-mismatch (…)` or `refused-address (…)` (the name
 * resolved to a refused address); an IP literal is `ip-literal`.
 */
export function parseAccessLine(
  line: string,
  sessionId: string,
  rules: readonly NetworkRule[],
): ConnectionAudit | null {
  const parts = line.trim().split(/\s+/);
  if (parts[0] !== AUDIT_PREFIX || parts.length !== FIELDS) return null;
  const [, ts, method, rawDomain, rawPort, status, inBytes, outBytes, tr, sni, remote, bump] = parts as [
    string,
    ...string[],
  ] as string[];
  const squidStatus = (status ?? "").split("/")[0] ?? "";
  const tunnel = method === "CONNECT";
  if (tunnel && squidStatus === "NONE_NONE" && bump === "splice") return null;
  const domain = (rawDomain ?? "").replace(/^\[|\]$/g, "").toLowerCase();
  const port = Number(rawPort) || (tunnel ? 443 : 80);
  const forwarded = tunnel
    ? squidStatus === "TCP_TUNNEL" && bump === "splice"
    : !squidStatus.startsWith("TCP_DENIED") && !squidStatus.startsWith("NONE") && remote !== "-";
  const verdict = decideConnection(rules, domain, port);
  let rule = verdict.rule;
  if (isIpLiteral(domain)) rule = "ip-literal";
  else if (!forwarded && verdict.decision === "ask") rule = `${verdict.rule} (not approved)`;
  else if (!forwarded && verdict.decision === "allow")
    rule = bump === "terminate" ? `sni-mismatch (${verdict.rule})` : `refused-address (${verdict.rule})`;
  const record: ConnectionAudit = {
    sessionId,
    time: new Date(Math.round(Number(ts) * 1000)).toISOString(),
    domain,
    port,
    method: method ?? "",
    decision: forwarded ? "allow" : "deny",
    rule,
    bytesOut: Number(inBytes) || 0,
    bytesIn: Number(outBytes) || 0,
    durationMs: Number(tr) || 0,
  };
  if (sni && sni !== "-") record.sni = sni.toLowerCase();
  if (forwarded && remote && remote !== "-") record.remoteAddress = remote;
  return record;
}

function isIpLiteral(domain: string): boolean {
  return /^[0-9.]+$/.test(domain) || domain.includes(":");
}
