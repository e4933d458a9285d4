/** Policy test helpers: a one-file policy from its YAML lines, and its decision on a bash command. */
import { evaluate, lexicalContext, parsePolicyText } from "../../src/policy/index.js";
import type { Decision } from "../../src/policy/types.js";

/** `decide(command)` under the policy file made of `lines` (paths resolved lexically). */
export function bashDecider(lines: string[]): (command: string) => Promise<Decision> {
  const policy = { layers: [parsePolicyText([...lines, ""].join("\n"), "p.yaml")] };
  return (command) => evaluate(policy, { tool: "bash", args: { command } }, lexicalContext);
}
