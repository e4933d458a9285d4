import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PolicyInvalidError } from "../../src/errors.js";
import { loadPolicy, parsePolicyText } from "../../src/policy/index.js";

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
      "p.yaml:5:5: unknown key 'comands' in rules[0]",
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
      "p.yaml:2:54: rule 'a' has commands but its tools do not include bash",
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

describe("loadPolicy", () => {
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
