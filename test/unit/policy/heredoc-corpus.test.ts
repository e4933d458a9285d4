/**
 * Issue 37, item 1: every here-document form of test/fixtures/heredoc-corpus.ts gets its exact
 * decision, deciding part and reason under the default, ci and readonly policies; a body bash
 * expands is never allowed unseen (the `runs` forms are all refused).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { evaluate, lexicalContext, loadPolicy, type Policy } from "../../../src/policy/index.js";
import { HEREDOC_CORPUS } from "../../fixtures/heredoc-corpus.js";

const NAMES = ["default", "ci", "readonly"] as const;
const policies = {} as Record<(typeof NAMES)[number], Policy>;
beforeAll(async () => {
  for (const name of NAMES)
    policies[name] = await loadPolicy([new URL(`../../../policies/${name}.yaml`, import.meta.url).pathname]);
});

describe("here-document corpus (issue 37, item 1)", () => {
  it("no form whose body bash runs is allowed", () => {
    for (const c of HEREDOC_CORPUS.filter((c) => c.bash === "runs"))
      for (const name of NAMES) expect(c[name][0], `${c.form} under ${name}`).not.toBe("allow");
  });

  it.each(HEREDOC_CORPUS.map((c) => [c.form, c] as const))("%s", async (_form, c) => {
    for (const name of NAMES) {
      const d = await evaluate(
        policies[name],
        { tool: "bash", args: { command: c.command } },
        lexicalContext,
      );
      expect([d.decision, d.part, d.reason ?? `rule ${d.ruleId}`], name).toEqual(c[name]);
    }
  });
});
