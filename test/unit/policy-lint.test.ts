/**
 * Issue 13 item 5: strict policy files. Unknown tool names and command words are errors with
 * file:line:col, every error of a file is reported at once, and rules an earlier rule shadows are
 * reported as findings.
 */
import { describe, expect, it } from "vitest";
import { PolicyInvalidError } from "../../src/errors.js";
import { parsePolicyText } from "../../src/policy/index.js";

function message(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(PolicyInvalidError);
    return (err as Error).message;
  }
  throw new Error("expected a PolicyInvalidError");
}

describe("strict policy files", () => {
  it("refuses an unknown tool name such as Bash, naming the place and the fix", () => {
    const text = "rules:\n  - id: deny-rm\n    decision: deny\n    tools: [Bash]\n    commands: [rm]\n";
    expect(message(() => parsePolicyText(text, "p.yaml"))).toBe(
      [
        "p.yaml:4:13: rule 'deny-rm': unknown tool 'Bash' (tools are read, bash, edit, write, grep, find, ls, *, or a lowercase name of a tool added to the session); did you mean 'bash'?",
        "p.yaml:5:15: rule 'deny-rm' has commands but its tools do not include bash",
      ].join("\n"),
    );
  });

  it("reports every error of a file at once, schema and semantic alike", () => {
    const schema =
      "rules:\n  - {id: a, decision: maybe, tools: [bash]}\n  - {id: b, decision: deny, tools: [bash], comands: [rm]}\n";
    expect(message(() => parsePolicyText(schema, "p.yaml"))).toBe(
      [
        'p.yaml:2:23: rules[0].decision: expected one of "allow" | "ask" | "deny"',
        "p.yaml:3:44: unknown key 'comands' in rules[1]",
      ].join("\n"),
    );
    const semantic =
      "rules:\n  - {id: a, decision: deny, tools: [bash], commands: ['$(rm)']}\n  - {id: a, decision: deny, tools: [Read]}\n";
    expect(message(() => parsePolicyText(semantic, "p.yaml"))).toBe(
      [
        "p.yaml:2:55: rule 'a': '$(rm)' does not start with a command name, so it never matches",
        "p.yaml:3:10: duplicate rule id 'a'",
        "p.yaml:3:37: rule 'a': unknown tool 'Read' (tools are read, bash, edit, write, grep, find, ls, *, or a lowercase name of a tool added to the session); did you mean 'read'?",
      ].join("\n"),
    );
  });

  it("reports a rule shadowed by an earlier rule of the same or a stricter decision", () => {
    const text = [
      "rules:",
      "  - {id: ask-git, decision: ask, tools: [bash], commands: [git]}",
      "  - {id: allow-status, decision: allow, tools: [bash], commands: [git status]}",
      "  - {id: deny-push, decision: deny, tools: [bash], commands: [git push]}",
      "  - {id: deny-env, decision: deny, tools: [read, bash], paths: ['**/.env', '*.pem']}",
      "  - {id: ask-env, decision: ask, tools: [read], paths: ['**/.env']}",
      "",
    ].join("\n");
    expect(parsePolicyText(text, "p.yaml").findings).toEqual([
      "p.yaml:3:10: rule 'allow-status' never decides: the earlier rule 'ask-git' (ask) matches everything it matches",
      "p.yaml:6:10: rule 'ask-env' never decides: the earlier rule 'deny-env' (deny) matches everything it matches",
    ]);
  });
});

describe("tool names of tools an embedder adds", () => {
  it("accepts a lowercase name that is no near miss of a built-in tool, refuses bsh and READ", () => {
    expect(
      parsePolicyText("rules:\n  - {id: a, decision: allow, tools: [web_fetch]}\n", "p.yaml").rules,
    ).toHaveLength(1);
    expect(
      message(() => parsePolicyText("rules:\n  - {id: a, decision: deny, tools: [bsh, READ]}\n", "p.yaml")),
    ).toBe(
      [
        "p.yaml:2:37: rule 'a': unknown tool 'bsh' (tools are read, bash, edit, write, grep, find, ls, *, or a lowercase name of a tool added to the session); did you mean 'bash'?",
        "p.yaml:2:42: rule 'a': unknown tool 'READ' (tools are read, bash, edit, write, grep, find, ls, *, or a lowercase name of a tool added to the session); did you mean 'read'?",
      ].join("\n"),
    );
  });
});
