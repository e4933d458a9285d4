import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PolicyInvalidError } from "../../../src/errors.js";
import { loadPolicy, parsePolicyText } from "../../../src/policy/index.js";

function message(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(PolicyInvalidError);
    return (err as Error).message;
  }
  throw new Error("expected a PolicyInvalidError");
}

describe("parsePolicyText: validation with file:line:column", () => {
  it("names the line, column and allowed values of a bad decision", () => {
    const text = "default: ask\nrules:\n  - id: r1\n    decision: maybe\n    tools: [bash]\n";
    expect(message(() => parsePolicyText(text, "p.yaml"))).toBe(
      'p.yaml:4:15: rules[0].decision: expected one of "allow" | "ask" | "deny"',
    );
  });

  it("points at an unknown key", () => {
    const text = "rules:\n  - id: r1\n    decision: deny\n    tools: [bash]\n    comands: [rm]\n";
    expect(message(() => parsePolicyText(text, "p.yaml"))).toBe(
      "p.yaml:5:5: unknown key 'comands' in rules[0] (did you mean 'commands'?)",
    );
  });

  it("names missing keys", () => {
    expect(message(() => parsePolicyText("rules:\n  - id: r1\n    tools: [bash]\n", "p.yaml"))).toBe(
      "p.yaml:2:5: rules[0] is missing required key(s): decision",
    );
  });

  it("reports YAML syntax errors and JSON files with positions", () => {
    expect(message(() => parsePolicyText("rules: [\n", "p.yaml"))).toMatch(
      /^p\.yaml:\d+:\d+: not valid YAML\/JSON: /,
    );
    const json = '{\n  "rules": [\n    {"id": "r", "decision": "deny", "tools": "bash"}\n  ]\n}\n';
    expect(message(() => parsePolicyText(json, "p.json"))).toBe("p.json:3:46: rules[0].tools: must be array");
  });

  it("rejects duplicate ids and commands on a rule that does not cover bash", () => {
    const dup =
      "rules:\n  - {id: a, decision: deny, tools: [bash]}\n  - {id: a, decision: allow, tools: [read]}\n";
    expect(message(() => parsePolicyText(dup, "p.yaml"))).toBe("p.yaml:3:10: duplicate rule id 'a'");
    const cmd = "rules:\n  - {id: a, decision: deny, tools: [read], commands: [rm]}\n";
    expect(message(() => parsePolicyText(cmd, "p.yaml"))).toBe(
      "p.yaml:2:54: rule 'a' has commands but its tools do not include bash or process",
    );
  });

  it("a valid file becomes a layer named by its position unless it says otherwise", () => {
    const layer = parsePolicyText("default: deny\nrules: []\n", "p.yaml", 2);
    expect(layer).toMatchObject({
      layer: "project",
      default: "deny",
      nonInteractive: false,
      rules: [],
      tests: [],
    });
    expect(parsePolicyText("layer: session\nrules: []\n", "q.yaml", 0).layer).toBe("session");
  });
});

// Issue 36 item 9: a policy file's errors name the fix, all in one round.
describe("errors that name the fix", () => {
  it("names a misspelt key as unknown, with the key it was meant to be, not as a missing one", () => {
    const text = "rules:\n  - id: r1\n    decison: deny\n    tools: [bash]\n";
    expect(message(() => parsePolicyText(text, "p.yaml"))).toBe(
      "p.yaml:3:5: unknown key 'decison' in rules[0] (did you mean 'decision'?)",
    );
    expect(
      message(() => parsePolicyText("rule:\n  - {id: r1, decision: deny, tools: [bash]}\n", "p.yaml")),
    ).toBe("p.yaml:1:1: unknown key 'rule' in the top level (did you mean 'rules'?)");
    expect(message(() => parsePolicyText("rules: []\nwhatever: 1\n", "p.yaml"))).toBe(
      "p.yaml:2:1: unknown key 'whatever' in the top level (known keys: name, description, layer, default, nonInteractive, maxCommandBytes, rules, tests, network, secrets)",
    );
  });

  it("reports a rule's schema error and another rule's semantic error in the same round", () => {
    const text = [
      "rules:",
      "  - {id: a, decison: deny, tools: [bash]}",
      "  - {id: b, decision: deny, tools: [Bash]}",
      "network:",
      "  allow: [https://pypi.org]",
      "",
    ].join("\n");
    expect(message(() => parsePolicyText(text, "p.yaml"))).toBe(
      [
        "p.yaml:2:13: unknown key 'decison' in rules[0] (did you mean 'decision'?)",
        "p.yaml:3:37: rule 'b': unknown tool 'Bash' (tools are read, bash, edit, write, grep, find, ls, process, *, or a lowercase name of a tool added to the session); did you mean 'bash'?",
        'p.yaml:5:11: network.allow[0] "https://pypi.org": a host pattern is wanted, not a URL: write pypi.org (ports 80 and 443) or pypi.org:443.',
      ].join("\n"),
    );
  });

  it("checks a rule with a misspelt key as meant, so its other errors come in the same round", () => {
    const text = "rules:\n  - {id: a, decison: deny, tools: [Bash]}\n";
    expect(message(() => parsePolicyText(text, "p.yaml"))).toBe(
      [
        "p.yaml:2:13: unknown key 'decison' in rules[0] (did you mean 'decision'?)",
        "p.yaml:2:36: rule 'a': unknown tool 'Bash' (tools are read, bash, edit, write, grep, find, ls, process, *, or a lowercase name of a tool added to the session); did you mean 'bash'?",
      ].join("\n"),
    );
  });

  it("refuses a malformed path glob, naming what is wrong with it", () => {
    const text = [
      "rules:",
      "  - id: r",
      "    decision: deny",
      "    tools: [read]",
      "    paths: ['/src/**.ts', '/a/{b,c', '/a/{b/c,d}', '/x/[abc', '/x/b}', '/[z-a]', '/ok/**/*.{ts,js}']",
      "",
    ].join("\n");
    expect(message(() => parsePolicyText(text, "p.yaml"))).toBe(
      [
        "p.yaml:5:13: rule 'r': path glob '/src/**.ts' has '**' inside the path component '**.ts': '**' matches any depth only as a whole component, e.g. /src/**/*.ts",
        "p.yaml:5:27: rule 'r': path glob '/a/{b,c' has a '{' that no '}' closes in '{b,c' (alternatives are {a,b} within one path component)",
        "p.yaml:5:38: rule 'r': path glob '/a/{b/c,d}' has a '{' that no '}' closes in '{b' (alternatives are {a,b} within one path component)",
        "p.yaml:5:52: rule 'r': path glob '/x/[abc' has a '[' that no ']' closes in '[abc' (a class is [abc] within one path component)",
        "p.yaml:5:63: rule 'r': path glob '/x/b}' has a '}' that closes no '{' in 'b}'",
        "p.yaml:5:72: rule 'r': path glob '/[z-a]' is not a valid pattern: Range out of order in character class",
      ].join("\n"),
    );
  });
});

describe("loadPolicy", () => {
  it("reports every file's errors in one round", async () => {
    const dir = mkdtempSync(join(tmpdir(), "warden-policy-"));
    const a = join(dir, "a.yaml");
    const b = join(dir, "b.yaml");
    writeFileSync(a, "rules:\n  - {id: a, decison: deny, tools: [bash]}\n");
    writeFileSync(b, "rules:\n  - {id: b, decision: deny, tools: [Read]}\n");
    await expect(loadPolicy([a, join(dir, "missing.yaml"), b])).rejects.toThrow(
      [
        `${a}:2:13: unknown key 'decison' in rules[0] (did you mean 'decision'?)`,
        `${join(dir, "missing.yaml")}: cannot read the policy file (ENOENT: no such file or directory, open '${join(dir, "missing.yaml")}')`,
        `${b}:2:37: rule 'b': unknown tool 'Read' (tools are read, bash, edit, write, grep, find, ls, process, *, or a lowercase name of a tool added to the session); did you mean 'read'?`,
      ].join("\n"),
    );
  });

  it("loads files in order and refuses a higher layer after a lower one", async () => {
    const dir = mkdtempSync(join(tmpdir(), "warden-policy-"));
    const a = join(dir, "a.yaml");
    const b = join(dir, "b.json");
    writeFileSync(a, "layer: session\nrules: []\n");
    writeFileSync(b, '{"layer": "operator", "rules": []}');
    await expect(loadPolicy([b, a])).resolves.toMatchObject({
      layers: [{ layer: "operator" }, { layer: "session" }],
    });
    await expect(loadPolicy([a, b])).rejects.toThrow(/layer 'operator' comes after 'session'/);
    await expect(loadPolicy([join(dir, "missing.yaml")])).rejects.toThrow(/cannot read the policy file/);
    const plain = join(dir, "plain.yaml");
    writeFileSync(plain, "rules: []\n");
    const named = await loadPolicy([plain, plain, a, plain]);
    expect(named.layers.map((l) => l.layer)).toEqual(["operator", "tenant", "session", "session"]);
  });
});

// Issue 13 item 5: strict policy files. Unknown tool names and command words are errors with
// file:line:col, every error of a file is reported at once, and shadowed rules are findings.
describe("strict policy files", () => {
  it("refuses an unknown tool name such as Bash, naming the place and the fix", () => {
    const text = "rules:\n  - id: deny-rm\n    decision: deny\n    tools: [Bash]\n    commands: [rm]\n";
    expect(message(() => parsePolicyText(text, "p.yaml"))).toBe(
      [
        "p.yaml:4:13: rule 'deny-rm': unknown tool 'Bash' (tools are read, bash, edit, write, grep, find, ls, process, *, or a lowercase name of a tool added to the session); did you mean 'bash'?",
        "p.yaml:5:15: rule 'deny-rm' has commands but its tools do not include bash or process",
      ].join("\n"),
    );
  });

  it("reports every error of a file at once, schema and semantic alike", () => {
    const schema =
      "rules:\n  - {id: a, decision: maybe, tools: [bash]}\n  - {id: b, decision: deny, tools: [bash], comands: [rm]}\n";
    expect(message(() => parsePolicyText(schema, "p.yaml"))).toBe(
      [
        'p.yaml:2:23: rules[0].decision: expected one of "allow" | "ask" | "deny"',
        "p.yaml:3:44: unknown key 'comands' in rules[1] (did you mean 'commands'?)",
      ].join("\n"),
    );
    const semantic =
      "rules:\n  - {id: a, decision: deny, tools: [bash], commands: ['$(rm)']}\n  - {id: a, decision: deny, tools: [Read]}\n";
    expect(message(() => parsePolicyText(semantic, "p.yaml"))).toBe(
      [
        "p.yaml:2:55: rule 'a': '$(rm)' does not start with a command name, so it never matches",
        "p.yaml:3:10: duplicate rule id 'a'",
        "p.yaml:3:37: rule 'a': unknown tool 'Read' (tools are read, bash, edit, write, grep, find, ls, process, *, or a lowercase name of a tool added to the session); did you mean 'read'?",
      ].join("\n"),
    );
  });

  it("a rule that fails the schema still gets its tool-name and glob errors in the same round", () => {
    // A new user's trial: `decision: alow` hid `tools: [Bash]` until the decision was fixed.
    const text = "rules:\n  - {id: a, decision: alow, tools: [Bash], paths: ['src/[']}\n";
    expect(message(() => parsePolicyText(text, "p.yaml"))).toBe(
      [
        'p.yaml:2:23: rules[0].decision: expected one of "allow" | "ask" | "deny"',
        "p.yaml:2:37: rule 'a': unknown tool 'Bash' (tools are read, bash, edit, write, grep, find, ls, process, *, or a lowercase name of a tool added to the session); did you mean 'bash'?",
        "p.yaml:2:52: rule 'a': path glob 'src/[' has a '[' that no ']' closes in '[' (a class is [abc] within one path component)",
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
        "p.yaml:2:37: rule 'a': unknown tool 'bsh' (tools are read, bash, edit, write, grep, find, ls, process, *, or a lowercase name of a tool added to the session); did you mean 'bash'?",
        "p.yaml:2:42: rule 'a': unknown tool 'READ' (tools are read, bash, edit, write, grep, find, ls, process, *, or a lowercase name of a tool added to the session); did you mean 'read'?",
      ].join("\n"),
    );
  });
});

describe("effects name what the command model knows", () => {
  it("refuses effects on a rule that is not an allow rule with commands", () => {
    const text =
      "rules:\n  - {id: a, decision: allow, tools: [bash], commands: [curl], effects: [network]}\n  - {id: b, decision: deny, tools: [bash], commands: [sed], effects: [write]}\n";
    expect(message(() => parsePolicyText(text, "p.yaml"))).toBe(
      "p.yaml:3:70: rule 'b': effects apply only to an allow rule with commands",
    );
  });

  it("issue 13: a command the model does not know is an error in an allow rule (all at once, file:line:col)", () => {
    const text = [
      "rules:",
      "  - id: a",
      "    decision: allow",
      "    tools: [bash]",
      "    commands: [cat, tsgo --watch, grp -r, 'git status']",
      "  - {id: b, decision: deny, tools: [bash], commands: [rn, curl, mytool]}",
      "  - {id: c, decision: allow, tools: [bash], commands: [tsgo], effects: [write, exec, network]}",
      "",
    ].join("\n");
    expect(message(() => parsePolicyText(text, "p.yaml"))).toBe(
      [
        "p.yaml:5:21: rule 'a': 'tsgo' is not a command the model knows, so its effects cannot be told apart (an allow rule may name it only with effects: [write, exec, network], accepting whatever it does)",
        "p.yaml:5:35: rule 'a': 'grp' is not a command the model knows, so its effects cannot be told apart; did you mean 'grep'? (an allow rule may name it only with effects: [write, exec, network], accepting whatever it does)",
        "p.yaml:6:55: rule 'b': 'rn' is not a command the model knows; did you mean 'rm'?",
      ].join("\n"),
    );
  });
});
