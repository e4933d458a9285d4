/**
 * Issue 13 follow-up: each form an independent attacker found auto-allowed (backticks inside
 * `${…}`, `cd` before relative paths, values attached inside option clusters, file names fed to
 * xargs, awk's ARGV, git pathspec globs, tool configuration from the environment, `~user` homes,
 * git config variants) gets the exact decision listed in test/fixtures/bypass-corpus-followup.ts
 * under each shipped policy.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { evaluate, lexicalContext, loadPolicy, type Policy } from "../../../src/policy/index.js";
import { FOLLOWUP_CORPUS } from "../../fixtures/bypass-corpus-followup.js";

const NAMES = ["default", "ci", "readonly", "strict"] as const;
const LETTER = { allow: "A", ask: "?", deny: "d" } as const;
const policies = {} as Record<(typeof NAMES)[number], Policy>;
beforeAll(async () => {
  for (const name of NAMES)
    policies[name] = await loadPolicy([new URL(`../../../policies/${name}.yaml`, import.meta.url).pathname]);
});

const cases = Object.entries(FOLLOWUP_CORPUS).flatMap(([technique, list]) =>
  list.map(([command, expected]) => [technique, command, expected] as const),
);

describe("issue 13 follow-up bypasses", () => {
  it("covers every class with 50+ commands, none expected to be allowed", () => {
    expect(Object.keys(FOLLOWUP_CORPUS)).toHaveLength(9);
    expect(cases.length).toBeGreaterThanOrEqual(50);
    for (const [, , expected] of cases) expect(expected).not.toContain("A");
  });

  it.each(cases)("%s: %j decides %s (default ci readonly strict)", async (_technique, command, expected) => {
    let got = "";
    for (const name of NAMES) {
      const d = await evaluate(policies[name], { tool: "bash", args: { command } }, lexicalContext);
      got += LETTER[d.decision];
    }
    expect(got).toBe(expected);
  });
});
