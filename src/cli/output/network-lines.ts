/**
 * The CLI's stderr lines about a session's network: one `warden: net …` line per connection through
 * the egress gateway, and one per window of records over the session's audit bound.
 */
import type { AuditDropSummary, ConnectionAudit } from "../../egress/index.js";

/**
 * One stderr line for an audit record, e.g. `warden: net ask→deny GET x.org:80 ask=non-interactive
 * rule="ask x.org:80+443 (nobody to ask: non-interactive)" out=120B in=3400B 2ms`. A refusal
 * `upstream-tls` ends with what to do (upstreamTlsFix): it names `--net-ca-bundle`.
 */
export function connectionLine(r: ConnectionAudit): string {
  const sni = r.sni && r.sni !== r.domain ? ` sni=${r.sni}` : "";
  const ask = r.ask ? ` ask=${r.ask}` : "";
  const fix = r.refusal === "upstream-tls" ? `; ${upstreamTlsFix(r.domain)}` : "";
  return `warden: net ${r.decision} ${r.method} ${r.domain}:${r.port}${sni}${ask} rule="${r.rule}" out=${r.bytesOut}B in=${r.bytesIn}B ${r.durationMs}ms${fix}\n`;
}

/**
 * What to do when the gateway's TLS connection to `domain` failed (refusal `upstream-tls`): the
 * usual cause on a first run is a network that intercepts TLS (a company proxy), whose CA the
 * gateway does not trust until `--net-ca-bundle` names it.
 */
function upstreamTlsFix(domain: string): string {
  return (
    `the gateway could not make a verified TLS connection to ${domain}: if this network intercepts TLS ` +
    "(a company proxy), pass that proxy's CA certificate (PEM) with --net-ca-bundle FILE; otherwise the origin is unreachable or its certificate is invalid"
  );
}

/**
 * One stderr line for the records over the session's audit bound, e.g. `warden: net 1800 records
 * not shown (rate-limit: 10/s, burst 200; deny=1800) 2026-12-01T10:00:00.000Z..2026-12-01T10:00:00.900Z`.
 */
export function droppedLine(s: AuditDropSummary): string {
  const decisions = Object.entries(s.decisions)
    .map(([d, n]) => `${d}=${n}`)
    .join(" ");
  return `warden: net ${s.dropped} records not shown (${s.reason}: ${s.limit.recordsPerSecond}/s, burst ${s.limit.burst}; ${decisions}) ${s.from}..${s.to}\n`;
}
