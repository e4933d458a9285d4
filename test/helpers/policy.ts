/**
 * Policy test helpers: a one-file policy from its YAML lines and its decision on a bash command, and
 * the shipped policies (policies/<name>.yaml) each loaded once per test file.
 */
import {
  type EvaluateContext,
  evaluate,
  lexicalContext,
  loadBashParser,
  loadPolicy,
  parsePolicyText,
} from "../../src/policy/index.js";
import type { Decision, Policy } from "../../src/policy/types.js";

/** `decide(command)` under the policy file made of `lines` (paths resolved lexically). */
export function bashDecider(lines: string[]): (command: string) => Promise<Decision> {
  const policy = { layers: [parsePolicyText([...lines, ""].join("\n"), "p.yaml")] };
  return (command) => evaluate(policy, { tool: "bash", args: { command } }, lexicalContext);
}

/** One letter per decision: A allow, ? ask, d deny. */
const LETTER = { allow: "A", ask: "?", deny: "d" } as const;

/** The shipped policies a test file decides bash commands under; see {@link shippedPolicies}. */
export interface ShippedPolicies<Name extends string> {
  /** The loaded policies/<name>.yaml (loaded on first use, with the bash parser). */
  policy(name: Name): Promise<Policy>;
  /** The decision on a bash tool call running `command` under `name`; paths resolved by `context`. */
  decide(name: Name, command: string, context?: EvaluateContext): Promise<Decision>;
  /** `show(decision)` under each policy, keyed by name, evaluated in the order the names were given. */
  each(command: string, show: (decision: Decision) => string): Promise<Record<Name, string>>;
  /** The decisions under each policy in the order the names were given, one letter each (A allow, ? ask, d deny). */
  letters(command: string): Promise<string>;
}

/**
 * The shipped policies `names` (files policies/<name>.yaml), each loaded once (after
 * loadBashParser) on first use, and their decisions on bash commands, resolving paths lexically
 * unless a context is given. Loading errors (a policy that does not parse) reject the first call.
 */
export function shippedPolicies<Name extends string>(...names: Name[]): ShippedPolicies<Name> {
  const loaded = new Map<Name, Promise<Policy>>();
  const policy = (name: Name) => {
    let found = loaded.get(name);
    if (!found) {
      const path = new URL(`../../policies/${name}.yaml`, import.meta.url).pathname;
      found = loadBashParser().then(() => loadPolicy([path]));
      loaded.set(name, found);
    }
    return found;
  };
  const decide = async (name: Name, command: string, context: EvaluateContext = lexicalContext) =>
    evaluate(await policy(name), { tool: "bash", args: { command } }, context);
  const each = async (command: string, show: (decision: Decision) => string) => {
    const out = {} as Record<Name, string>;
    for (const name of names) out[name] = show(await decide(name, command));
    return out;
  };
  const letters = async (command: string) =>
    Object.values<string>(await each(command, (d) => LETTER[d.decision])).join("");
  return { policy, decide, each, letters };
}

/** A decision as `[decision, ruleId or null, part or null]`, the triple most policy assertions compare. */
export function decisionRulePart(d: Decision): [Decision["decision"], string | null, string | null] {
  return [d.decision, d.ruleId ?? null, d.part ?? null];
}
