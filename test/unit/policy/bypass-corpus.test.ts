/**
 * The bypass corpus (test/fixtures/bypass-corpus.json, 170+ attempts: chaining, newlines, $(),
 * backticks, process substitution, brace groups, subshells, functions, eval, wrappers,
 * redirections, here-docs, $'…' quoting, r''m, \rm, /bin/rm, variables as command names): none
 * may be auto-allowed under a policy that allows only read-only commands. Plain commands stay allowed.
 */
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { evaluate, lexicalContext, loadPolicy, type Policy } from "../../../src/policy/index.js";

interface Attempt {
  technique: string;
  command: string;
}

const corpus = JSON.parse(
  readFileSync(new URL("../../fixtures/bypass-corpus.json", import.meta.url), "utf8"),
) as Attempt[];
const fixturePolicy = new URL("../../fixtures/bypass-corpus-policy.yaml", import.meta.url).pathname;
const readonlyPolicy = new URL("../../../policies/readonly.yaml", import.meta.url).pathname;

let policy: Policy;
let readonly: Policy;
beforeAll(async () => {
  policy = await loadPolicy([fixturePolicy]);
  readonly = await loadPolicy([readonlyPolicy]);
});

describe("bypass corpus", () => {
  it("holds at least 100 attempts over every technique of issue 4", () => {
    expect(corpus.length).toBeGreaterThanOrEqual(100);
    const techniques = new Set(corpus.map((a) => a.technique));
    for (const t of ["chaining", "newlines", "command substitution", "backticks", "process substitution"]) {
      expect(techniques.has(t)).toBe(true);
    }
    for (const t of ["brace groups", "subshells", "functions", "eval", "env wrapper", "xargs wrapper"]) {
      expect(techniques.has(t)).toBe(true);
    }
    for (const t of ["find -exec", "sudo and other wrappers", "bash -c", "redirections", "here-docs"]) {
      expect(techniques.has(t)).toBe(true);
    }
    for (const t of ["ansi-c quoting", "quote splicing", "paths to binaries", "variables as command names"]) {
      expect(techniques.has(t)).toBe(true);
    }
  });

  it.each(corpus.map((a) => [a.technique, a.command]))(
    "%s: %j is never auto-allowed",
    async (_t, command) => {
      const decision = await evaluate(policy, { tool: "bash", args: { command } }, lexicalContext);
      expect(decision.decision, JSON.stringify(decision.trail)).not.toBe("allow");
      const strict = await evaluate(readonly, { tool: "bash", args: { command } }, lexicalContext);
      expect(strict.decision).not.toBe("allow");
    },
  );

  it.each([
    "git status",
    "ls -la",
    "npm test",
    "cat README.md",
    "grep -r foo src",
    "git diff HEAD~1 -- src",
    "ls -la 2>/dev/null | sort | head -n 20",
    "git log --oneline -n 5 && git status --short",
    'grep -rn "TODO(x)" src',
    "echo 'a; rm -rf src'",
    "find . -name '*.ts'",
  ])("plain %j stays allowed", async (command) => {
    const decision = await evaluate(policy, { tool: "bash", args: { command } }, lexicalContext);
    expect(decision.decision, JSON.stringify(decision.trail)).toBe("allow");
  });
});
