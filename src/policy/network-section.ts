/**
 * A policy file's `network:` section: domain entries (`host[:port[+port]]`, wildcards
 * `*.example.org`) under `allow`, `ask` and `deny`:
 *
 *     network:
 *       allow: [pypi.org, "*.pythonhosted.org:443"]
 *       deny: ["*.evil.example"]
 *
 * Layering, strictest wins: a connection's decision is the strictest of every layer that has a
 * `network:` section (a name such a layer does not list is denied there), so a lower layer or
 * `--allow-net` can narrow what a higher one allows, never widen it. effectiveNetworkRules turns
 * the layers into the one rule list the gateway enforces.
 */
import { type Static, Type } from "typebox";
import type { NetworkRule } from "../egress/index.js";
import { decideConnection, parseHostEntry } from "../egress/index.js";
import { WardenError } from "../errors.js";

const Entries = Type.Array(Type.String({ minLength: 1 }), { description: "host[:port[+port]] entries" });

/** Schema of the `network:` key (hooked into PolicyFileSchema). */
export const NetworkSectionSchema = Type.Object(
  { allow: Type.Optional(Entries), ask: Type.Optional(Entries), deny: Type.Optional(Entries) },
  { additionalProperties: false },
);
export type NetworkSection = Static<typeof NetworkSectionSchema>;

/** The rules of one section, or the entries that do not parse (path into the file, and why). */
export function networkSectionRules(section: NetworkSection | undefined): {
  rules: NetworkRule[];
  errors: { path: (string | number)[]; text: string }[];
} {
  const rules: NetworkRule[] = [];
  const errors: { path: (string | number)[]; text: string }[] = [];
  for (const decision of ["allow", "ask", "deny"] as const) {
    for (const [i, entry] of (section?.[decision] ?? []).entries()) {
      try {
        rules.push(parseHostEntry(entry, decision, `network.${decision}[${i}]`));
      } catch (err) {
        if (!(err instanceof WardenError)) throw err;
        errors.push({ path: ["network", decision, i], text: err.message });
      }
    }
  }
  return { rules, errors };
}

/**
 * The rule list that gives, for any host and port, the strictest decision of `layers` (each the
 * rules of one layer with a `network:` section, or of `--allow-net`, or of a tenant's bound).
 * A host pattern is kept as allow/ask only where every layer allows or asks for all of it (a
 * wildcard one layer lists is dropped when another lists only some of its names); every deny is
 * kept. No layers: no rules (no network).
 */
export function effectiveNetworkRules(layers: readonly (readonly NetworkRule[])[]): NetworkRule[] {
  if (layers.length === 0) return [];
  const byKey = new Map<string, NetworkRule>();
  const add = (host: string, port: number, decision: NetworkRule["decision"], source?: string) => {
    const key = `${decision} ${host}`;
    const rule = byKey.get(key) ?? { host, ports: [], decision, ...(source ? { source } : {}) };
    if (!rule.ports.includes(port)) rule.ports = [...rule.ports, port].sort((a, b) => a - b);
    byKey.set(key, rule);
  };
  for (const layer of layers) {
    for (const r of layer) {
      if (r.decision === "deny") {
        for (const p of r.ports) add(r.host, p, "deny", r.source);
        continue;
      }
      for (const port of r.ports) {
        const verdicts = layers.map((l) => decideConnection(l, r.host, port).decision);
        const strictest = verdicts.includes("deny") ? "deny" : verdicts.includes("ask") ? "ask" : "allow";
        if (strictest !== "deny") add(r.host, port, strictest, r.source);
      }
    }
  }
  return [...byKey.values()];
}
