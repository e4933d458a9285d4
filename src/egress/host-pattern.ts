/**
 * Network rule syntax: `host[:port[,port…]]` entries as `--allow-net` and policy files write them,
 * parsed into NetworkRules, and the pure matching the gateway's config and the audit lines share.
 * A host is a DNS name or `*.` plus one; IP literals are refused (an allowlist names domains, and
 * the gateway refuses IP literals anyway).
 */
import { InvalidArgumentError } from "../errors.js";
import { publicSuffixProblem } from "./public-suffix.js";
import type { SessionSecret } from "./secrets.js";
import type { NetworkDecision, NetworkRule } from "./types.js";

/** Ports a rule covers when it names none: HTTP and HTTPS. */
const DEFAULT_PORTS: readonly number[] = [80, 443];

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** Why `host` is not a valid rule host, or null when it is (lower-case name or `*.name`). */
export function hostProblem(host: string): string | null {
  const name = host.startsWith("*.") ? host.slice(2) : host;
  if (name.length === 0 || name.length > 253) return "a domain name of 1 to 253 characters";
  if (isIpLiteral(name)) return "a domain name, not an IP address (the gateway refuses IP literals)";
  // Single-label names (engine-internal aliases) are allowed; `*.` alone is not (name is empty).
  const labels = name.split(".");
  if (!labels.every((l) => LABEL.test(l)))
    return "lower-case letters, digits and hyphens in dot-separated labels (a leading `*.` for subdomains)";
  return null;
}

/** True for an IPv4 literal (digits and dots) or an IPv6 one (any `:`). */
export function isIpLiteral(host: string): boolean {
  return /^[0-9.]+$/.test(host) || host.includes(":");
}

/**
 * Parses one `host[:port[,port…]]` entry (ports 1..65535; none = 80 and 443). Throws
 * InvalidArgumentError naming `what` (e.g. `--allow-net entry 2`) and the expected form.
 */
export function parseHostEntry(entry: string, decision: NetworkDecision, what: string): NetworkRule {
  const text = entry.trim().toLowerCase();
  const url = urlProblem(text);
  if (url) throw new InvalidArgumentError(`${what} ${JSON.stringify(entry)}: ${url}.`);
  const colon = text.indexOf(":");
  const host = colon < 0 ? text : text.slice(0, colon);
  const problem = hostProblem(host);
  if (problem)
    throw new InvalidArgumentError(`${what} ${JSON.stringify(entry)}: the host must be ${problem}.`);
  const suffix = publicSuffixProblem(host, decision);
  if (suffix) throw new InvalidArgumentError(`${what} ${JSON.stringify(entry)}: ${suffix}.`);
  const ports = colon < 0 ? [...DEFAULT_PORTS] : parsePorts(text.slice(colon + 1), entry, what);
  return { host, ports, decision, source: what };
}

/**
 * For an entry written as a URL (`https://pypi.org/simple`), what to write instead: the host, or
 * the host and the URL's port (its scheme's default port when it names none: https 443, http 80).
 * Null for anything without `/` (a host pattern). Used for `--allow-net`, policy and library rules alike.
 */
export function urlProblem(text: string): string | null {
  if (!text.includes("/")) return null;
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//.exec(text)?.[1];
  const rest = scheme ? text.slice(scheme.length + 3) : text;
  const authority = rest.split(/[/?#]/)[0] ?? "";
  const path = rest.slice(authority.length);
  const [host = "", port] = authority.replace(/^[^@]*@/, "").split(":");
  if (host === "") return "a host pattern is wanted, not a URL or a path: write the domain, e.g. pypi.org";
  const paths = path !== "" && path !== "/" ? "; the gateway allows hosts and ports, not paths" : "";
  const defaultPort = scheme === "https" ? "443" : scheme === "http" ? "80" : undefined;
  const write = port
    ? `${host}:${port}`
    : defaultPort
      ? `${host} (ports 80 and 443) or ${host}:${defaultPort}`
      : `${host} (ports 80 and 443)`;
  return `a host pattern is wanted, not a URL: write ${write}${paths}`;
}

function parsePorts(text: string, entry: string, what: string): number[] {
  const ports = text.split(/[,+]/).map((p) => (/^\d{1,5}$/.test(p) ? Number(p) : Number.NaN));
  if (ports.length === 0 || ports.some((p) => !Number.isInteger(p) || p < 1 || p > 65535))
    throw new InvalidArgumentError(
      `${what} ${JSON.stringify(entry)}: ports must be numbers from 1 to 65535 (host:443 or host:80+443).`,
    );
  return [...new Set(ports)].sort((a, b) => a - b);
}

/** Parses a comma-separated `--allow-net` value (`a.org,b.org:443`) into allow rules. */
export function parseAllowNet(value: string): NetworkRule[] {
  // A comma separates entries; a port list inside one entry uses `+` (host:80+443).
  return value
    .split(",")
    .map((e) => e.trim())
    .filter((e) => e !== "")
    .map((e, i) => parseHostEntry(e, "allow", `--allow-net entry ${i + 1}`));
}

/** True when `host` (lower case, no trailing dot) is covered by the rule's host pattern. */
export function hostMatches(pattern: string, host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, "");
  if (pattern.startsWith("*.")) return name.endsWith(pattern.slice(1)) && name.length > pattern.length - 1;
  return name === pattern;
}

/** Strictness order: deny beats ask beats allow. */
const RANK: Record<NetworkDecision, number> = { allow: 0, ask: 1, deny: 2 };

/**
 * The decision for a connection to `host:port`: the strictest rule that matches it, or a deny
 * with rule "not-listed" when none does. Pure; the gateway's config encodes the same order.
 */
export function decideConnection(
  rules: readonly NetworkRule[],
  host: string,
  port: number,
): { decision: NetworkDecision; rule: string } {
  let best: NetworkRule | undefined;
  for (const r of rules) {
    if (!hostMatches(r.host, host)) continue;
    // A deny names a domain whatever the port; allow and ask cover their ports only.
    if (r.decision !== "deny" && !r.ports.includes(port)) continue;
    if (!best || RANK[r.decision] > RANK[best.decision]) best = r;
  }
  return best ? { decision: best.decision, rule: ruleName(best) } : { decision: "deny", rule: "not-listed" };
}

/** `host:port+port` as audit lines name a rule. */
function ruleName(rule: NetworkRule): string {
  return `${rule.decision} ${rule.host}:${rule.ports.join("+")}`;
}

/**
 * A stable text of a session's network policy for the warm pool's key: `none`, or the allowlist's
 * rules (sorted), egress networks, CA bundle path and content digest (a spare's gateway trusts the
 * bundle as it was when it started), resolvers, secret names and bindings, and the approval
 * timeout (the gateway's own wait for an answer is derived from it). Callbacks are not part of it.
 */
export function networkPolicyKey(
  network:
    | { mode: "none" }
    | {
        mode: "allowlist";
        rules: readonly NetworkRule[];
        egressNetworks?: string[];
        caBundlePath?: string;
        caBundleSha256?: string;
        resolvers?: readonly string[];
        approvalTimeoutMs?: number;
        secrets?: readonly SessionSecret[];
      }
    | undefined,
): string {
  if (!network || network.mode === "none") return "none";
  const rules = network.rules
    .map((r) => `${r.decision} ${r.host}:${[...r.ports].sort((a, b) => a - b).join("+")}`)
    .sort();
  return JSON.stringify({
    rules,
    egress: [...(network.egressNetworks ?? ["bridge"])].sort(),
    ca: network.caBundlePath ? [network.caBundlePath, network.caBundleSha256 ?? null] : null,
    approvalTimeoutMs: network.approvalTimeoutMs ?? null,
    resolvers: network.resolvers ?? [],
    // The gateway's config names the headers it checks, and its relay the secrets it knows.
    secrets: (network.secrets ?? [])
      .map((s) => JSON.stringify([s.name, s.env ?? null, s.file ?? null, s.bindings]))
      .sort(),
  });
}
