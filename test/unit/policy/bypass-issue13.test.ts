/**
 * Issue 13, item 6: the bypass corpus (test/fixtures/bypass-corpus-issue13.ts, 500+ commands by
 * class) against the four shipped policies. The false-refusal corpus (the bash commands of a real
 * recorded Pi session, which lives beside the repository, never in it) is test/pi/false-refusals.test.ts,
 * run by `npm run test:pi`. README "Policies" prints both figures.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { evaluate, lexicalContext, loadPolicy, type Policy } from "../../../src/policy/index.js";
import { issue13Corpus } from "../../fixtures/bypass-corpus-issue13.js";

const NAMES = ["default", "ci", "readonly", "strict"] as const;
type Name = (typeof NAMES)[number] | "model";
const policies = {} as Record<Name, Policy>;
beforeAll(async () => {
  for (const name of NAMES)
    policies[name] = await loadPolicy([new URL(`../../../policies/${name}.yaml`, import.meta.url).pathname]);
  policies.model = await loadPolicy([
    new URL("../../fixtures/bypass-corpus-model-policy.yaml", import.meta.url).pathname,
  ]);
});

const decide = async (name: Name, command: string) =>
  evaluate(policies[name], { tool: "bash", args: { command } }, lexicalContext);

const corpus = issue13Corpus();

describe("issue 13 bypass corpus", () => {
  it("holds at least 500 commands over every class of the issue", () => {
    expect(corpus.length).toBeGreaterThanOrEqual(500);
    expect(new Set(corpus.map((c) => c.technique))).toEqual(
      new Set([
        "nested substitution",
        "code from a variable's value",
        "environment without an assignment word",
        "option spellings",
        "build tools running inline code",
        "opaque words",
        "secret globs and expansions",
        "git branch writes",
        "writing forms of read-only commands",
        "code run by allowed commands",
        "writing forms of allowed commands",
        "secret paths the command model resolves",
      ]),
    );
  });

  it.each(corpus.map((c) => [c.technique, c.command]))(
    "%s: %j is refused: not allowed under default, readonly, strict and (but secret reads) the model fixture; denied under ci",
    async (technique, command) => {
      for (const name of ["default", "readonly", "strict", "model"] as const) {
        // The model fixture guards writes only: secret reads are not its subject.
        if (name === "model" && technique === "secret globs and expansions") continue;
        const d = await decide(name, command);
        expect(d.decision, `${name}: ${JSON.stringify(d.trail)}`).not.toBe("allow");
      }
      expect((await decide("ci", command)).decision).toBe("deny");
    },
  );
});
