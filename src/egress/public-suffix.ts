/**
 * Refuses an allow or ask wildcard that spans a public suffix (`*.org`, `*.co.uk`, `*.github.io`):
 * it would let the sandbox reach every domain registered under it, each with another owner, and so
 * send anything anywhere. The suffixes are the Public Suffix List's ICANN and private sections, as
 * the tldts library bundles them (no network at run time).
 */
import { parse } from "tldts";
import type { NetworkDecision } from "./types.js";

/**
 * Why `host` (a rule host, lower case) may not carry `decision`, or null when it may: only an
 * allow or ask wildcard `*.X` whose X is itself on the Public Suffix List is refused. A deny of
 * one (`deny *.zip`) is fine, and so is an exact name (`github.io`), which names one site.
 */
export function publicSuffixProblem(host: string, decision: NetworkDecision): string | null {
  if (decision === "deny" || !host.startsWith("*.")) return null;
  const suffix = host.slice(2);
  const parsed = parse(suffix, { allowPrivateDomains: true });
  if (parsed.publicSuffix !== suffix || !(parsed.isIcann || parsed.isPrivate)) return null;
  return (
    `${host} covers every domain under ${suffix}, a public suffix (Public Suffix List), each with another owner; ` +
    `name the domain you need instead, e.g. example.${suffix} or *.example.${suffix}`
  );
}
