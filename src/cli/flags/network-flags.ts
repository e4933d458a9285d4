/**
 * The network flags of `warden exec`, `replay`, `run` and `mcp`: `--allow-net host[:port],…`
 * (allowlist mode through the egress gateway; repeatable), `--net-ca-bundle <pem>` (extra CA
 * certificates the gateway trusts for origins) and `--egress-network <name>` (engine network the gateway leaves through;
 * default bridge). Each connection is reported on stderr as one `warden: net …` line.
 */
import type { Command } from "commander";
import {
  type AuditDropSummary,
  type ConnectionAudit,
  type NetworkOptions,
  type NetworkRule,
  parseAllowNet,
} from "../../egress/index.js";
import { InvalidArgumentError } from "../../errors.js";
import { effectiveNetworkRules, loadPolicy } from "../../policy/index.js";

/** The parsed network flags. */
export interface NetworkFlags {
  /** `--allow-net`, one string per occurrence. */
  allowNet?: string[];
  netCaBundle?: string;
  egressNetwork?: string[];
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** Adds the network flags to `command`. */
export function addNetworkFlags(command: Command): Command {
  return command
    .option(
      "--allow-net <hosts>",
      "let the sandbox reach these domains through warden's egress gateway: host[:port[+port]],… (host names, not URLs: pypi.org, not https://pypi.org; wildcards *.example.org; default ports 80 and 443; repeatable). Without it: no network",
      collect,
    )
    .option(
      "--net-ca-bundle <file>",
      "PEM file of extra CA certificates (at most 64 KiB) the egress gateway trusts for origins, besides the system's",
    )
    .option(
      "--egress-network <name>",
      "engine network the egress gateway leaves through (default bridge; repeatable)",
      collect,
    );
}

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
export function upstreamTlsFix(domain: string): string {
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

/** The `network:` sections of policy files, one rule list per file that has one. */
export async function policyNetworkLayers(files: string[] | undefined): Promise<NetworkRule[][]> {
  if (!files?.length) return [];
  const policy = await loadPolicy(files);
  return policy.layers.flatMap((l) => (l.network ? [l.network] : []));
}

/**
 * The session's NetworkOptions, or undefined (mode none) when neither `--allow-net` nor a policy
 * file's `network:` section names a domain. Policy sections and `--allow-net` are layers: a
 * connection gets the strictest of their decisions (effectiveNetworkRules), so `--allow-net`
 * cannot widen what a policy file allows.
 */
export function networkOptionsOf(
  flags: NetworkFlags,
  policyLayers: NetworkRule[][] = [],
): NetworkOptions | undefined {
  const layers = [...policyLayers];
  if (flags.allowNet?.length) {
    const allowNet = flags.allowNet.flatMap((value) => parseAllowNet(value));
    if (allowNet.length === 0)
      throw new InvalidArgumentError("--allow-net needs at least one host, e.g. --allow-net pypi.org.");
    layers.push(allowNet);
  }
  const rules = effectiveNetworkRules(layers);
  if (!rules.some((r) => r.decision !== "deny")) {
    if (flags.netCaBundle || flags.egressNetwork?.length)
      throw new InvalidArgumentError(
        "--net-ca-bundle and --egress-network need --allow-net (or a policy network: section): name the domains to allow.",
      );
    return undefined;
  }
  return {
    mode: "allowlist",
    rules,
    ...(flags.egressNetwork?.length ? { egressNetworks: flags.egressNetwork } : {}),
    ...(flags.netCaBundle ? { caBundlePath: flags.netCaBundle } : {}),
    onConnection: (r) => process.stderr.write(connectionLine(r)),
    onAuditDropped: (s) => process.stderr.write(droppedLine(s)),
  };
}
