/**
 * Runs a policy file's own `tests:` section (examples with the expected decision, like Codex's
 * match / not_match), resolving paths lexically.
 */
import { evaluate, lexicalContext } from "./evaluate.js";
import type { Decision, PolicyLayer, PolicyTest } from "./types.js";

/** One failed example: what was expected and what the policy decided. */
interface PolicyTestFailure {
  index: number;
  test: PolicyTest;
  got: Decision;
  /** Human-readable summary, e.g. `bash {"command":"rm x"}: expected deny (rule deny-rm), got ask (default)`. */
  message: string;
}

/** Result of one file's tests. */
export interface PolicyTestReport {
  file: string;
  passed: number;
  failures: PolicyTestFailure[];
}

/** Evaluates every test of `layer` against that layer alone. */
export async function runPolicyTests(layer: PolicyLayer): Promise<PolicyTestReport> {
  const policy = { layers: [layer] };
  const failures: PolicyTestFailure[] = [];
  let passed = 0;
  for (const [index, test] of layer.tests.entries()) {
    const got = await evaluate(policy, { tool: test.tool, args: test.args }, lexicalContext);
    const ruleOk = test.rule === undefined || got.ruleId === test.rule;
    if (got.decision === test.expect && ruleOk) {
      passed++;
      continue;
    }
    const want = `${test.expect}${test.rule ? ` (rule ${test.rule})` : ""}`;
    const have = `${got.decision} (${got.ruleId ? `rule ${got.ruleId}` : "no rule"}${got.part ? `, part '${got.part}'` : ""})`;
    const note = test.note ? ` — ${test.note}` : "";
    failures.push({
      index,
      test,
      got,
      message: `tests[${index}] ${test.tool} ${JSON.stringify(test.args)}: expected ${want}, got ${have}${note}`,
    });
  }
  return { file: layer.file, passed, failures };
}
