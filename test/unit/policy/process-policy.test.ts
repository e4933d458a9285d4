import { beforeAll, describe, expect, it } from "vitest";
import { PolicyInvalidError } from "../../../src/errors.js";
import type { BeforeToolCallContext } from "../../../src/pipeline/index.js";
import {
  createPolicyHook,
  type EvaluateContext,
  evaluate,
  lexicalContext,
  loadBashParser,
  type Policy,
  parsePolicyText,
} from "../../../src/policy/index.js";
import { inputProgram } from "../../../src/policy/process-subjects.js";
import { createProcessTool } from "../../../src/tools/index.js";
import { FakeProcesses } from "../../helpers/fake-processes.js";
import { FakeSandbox } from "../../helpers/fake-sandbox.js";
import { shippedPolicies } from "../../helpers/policy.js";

beforeAll(async () => {
  await loadBashParser();
});

const shipped = shippedPolicies("default", "ci", "strict", "readonly");

/** An evaluate context that knows the processes of `processes` (as the hook's does). */
function knowing(processes: FakeProcesses): EvaluateContext {
  return { ...lexicalContext, processRecord: (id) => processes.records().find((r) => r.id === id) };
}

const input = (id: string, text: string) => ({ tool: "process", args: { action: "input", id, text } });

function policyOf(text: string): Policy {
  return { layers: [parsePolicyText(text, "p.yaml")] };
}

/** The error text of loading a policy file made of `text`. */
function loadError(text: string): string {
  try {
    parsePolicyText(text, "p.yaml");
  } catch (err) {
    if (err instanceof PolicyInvalidError) return err.message;
    throw err;
  }
  return "(loaded)";
}

describe("the process tool's start is judged as bash", () => {
  it("rm -rf / is denied by the same rule, part and reason as under bash", async () => {
    const policy = await shipped.policy("default");
    const asBash = await evaluate(policy, { tool: "bash", args: { command: "rm -rf /" } }, lexicalContext);
    const asProcess = await evaluate(
      policy,
      { tool: "process", args: { action: "start", command: "rm -rf /" } },
      lexicalContext,
    );
    expect(asProcess).toMatchObject({
      decision: "deny",
      ruleId: "deny-rm",
      part: "rm -rf /",
      layer: "operator",
    });
    expect(asProcess.reason).toBe(asBash.reason);
    expect(asProcess.trail.map((e) => [e.kind, e.part, e.decision, e.ruleId])).toEqual(
      asBash.trail.map((e) => [e.kind, e.part, e.decision, e.ruleId]),
    );
  });

  it("its cwd is where relative paths lie (resolved as the tool resolves it), and rules may name the process tool", async () => {
    const policy = await shipped.policy("default");
    const start = (command: string, cwd?: string) => ({
      tool: "process",
      args: { action: "start", command, ...(cwd === undefined ? {} : { cwd }) },
    });
    expect((await evaluate(policy, start("cat config", "@.git"), lexicalContext)).ruleId).toBe(
      "deny-secrets",
    );
    expect((await evaluate(policy, start("npm run dev"), lexicalContext)).decision).toBe("ask");
    const own = policyOf(`
default: ask
rules:
  - { id: dev-server, decision: allow, tools: [process], commands: ["npm run dev"] }
`);
    expect(await evaluate(own, start("npm run dev"), lexicalContext)).toMatchObject({
      decision: "allow",
      ruleId: "dev-server",
    });
    const asBash = await evaluate(own, { tool: "bash", args: { command: "npm run dev" } }, lexicalContext);
    expect(asBash.decision).toBe("ask");
  });
});

describe("input to a process", () => {
  it("to bash asks under the default policy (denied under ci and readonly), naming why", async () => {
    const processes = new FakeProcesses();
    processes.add({ shell: "bash" });
    const d = await evaluate(
      await shipped.policy("default"),
      input("p1", "rm -rf src\n"),
      knowing(processes),
    );
    expect(d).toEqual({
      decision: "ask",
      part: "input to p1 (bash)",
      reason: "input to process p1 (bash) may be a command it runs; no rule's input names bash",
      trail: [
        {
          kind: "opaque",
          part: "input to p1 (bash)",
          decision: "ask",
          reason: "input to process p1 (bash) may be a command it runs; no rule's input names bash",
          approvalScope: expect.any(String),
        },
      ],
    });
    for (const name of ["ci", "readonly"] as const)
      expect(
        (await evaluate(await shipped.policy(name), input("p1", "y\n"), knowing(processes))).decision,
      ).toBe("deny");
  });

  it("to a program a rule's input names is decided by that rule; others stay opaque", async () => {
    const processes = new FakeProcesses();
    processes.add({ shell: "python3 -i" });
    processes.add({ argv: ["node"] });
    processes.add({ shell: "cat notes | python3" });
    processes.add({ shell: "./python3" });
    const policy = policyOf(`
default: ask
rules:
  - { id: repl-input, decision: allow, tools: [process], input: [python3] }
  - { id: no-node-input, decision: deny, tools: [process], input: [node], reason: not node }
`);
    const ctx = knowing(processes);
    expect(await evaluate(policy, input("p1", "print(1)\n"), ctx)).toMatchObject({
      decision: "allow",
      ruleId: "repl-input",
      part: "input to p1 (python3)",
    });
    expect(await evaluate(policy, input("p2", "1+1\n"), ctx)).toMatchObject({
      decision: "deny",
      ruleId: "no-node-input",
      reason: "not node",
    });
    expect(await evaluate(policy, input("p3", "x\n"), ctx)).toMatchObject({
      decision: "ask",
      part: "input to p3 (a program that cannot be told from its command)",
      reason:
        "input to process p3 (a program that cannot be told from its command) may be a command it runs; no rule's input names it",
    });
    // attack-procs F1: `./python3` is whatever file the model put there, not the python3 a rule names.
    expect(await evaluate(policy, input("p4", "import os\n"), ctx)).toMatchObject({
      decision: "ask",
      part: "input to p4 (a program that cannot be told from its command)",
    });
  });

  it("to a process the session does not know (yet) is opaque, even where a rule names programs", async () => {
    const policy = policyOf(`
default: allow
rules:
  - { id: repl-input, decision: allow, tools: [process], input: [python3] }
`);
    expect(await evaluate(policy, input("p7", "x"), knowing(new FakeProcesses()))).toMatchObject({
      decision: "ask",
      reason: "input to process p7, which this session does not know, may be a command",
    });
    expect((await evaluate(policy, input("p7", "x"), lexicalContext)).decision).toBe("ask");
  });

  it("the program is the one plain command of the script, else unknown", () => {
    expect(inputProgram({ shell: "python3 -i" })).toBe("python3");
    // A path is whatever file stands there (maybe one the model wrote): no rule names it.
    expect(inputProgram({ shell: "/usr/bin/psql -h db" })).toBeNull();
    expect(inputProgram({ argv: ["/bin/bash", "-i"] })).toBeNull();
    expect(inputProgram({ shell: "./cat" })).toBeNull();
    expect(inputProgram({ argv: ["./cat"] })).toBeNull();
    expect(inputProgram({ shell: "bash --norc" })).toBe("bash");
    for (const shell of [
      "cat | python3",
      "xargs rm",
      "cd x && python3",
      "$P",
      "eval python3",
      "env python3",
      "bash | sh",
    ])
      expect(inputProgram({ shell })).toBeNull();
  });
});

describe("output, list, wait and kill", () => {
  it("are allowed under the default policy by rule allow-process-control; strict asks for kill", async () => {
    for (const args of [
      { action: "output", id: "p1" },
      { action: "output", id: "p1", offset: 10 },
      { action: "list" },
      { action: "wait", id: "p1", timeout: 5 },
      { action: "kill", id: "p1" },
      { action: "kill", id: "p1", signal: "KILL" },
    ])
      expect(
        await evaluate(await shipped.policy("default"), { tool: "process", args }, lexicalContext),
      ).toMatchObject({
        decision: "allow",
        ruleId: "allow-process-control",
        part: `process ${args.action}`,
      });
    const kill = { tool: "process", args: { action: "kill", id: "p1" } };
    expect((await evaluate(await shipped.policy("strict"), kill, lexicalContext)).decision).toBe("ask");
  });

  it("a rule's actions decide only those actions; a bare rule on process decides every call of it", async () => {
    const policy = policyOf(`
default: ask
rules:
  - { id: no-kill, decision: deny, tools: [process], actions: [kill] }
`);
    const decide = (args: Record<string, unknown>) =>
      evaluate(policy, { tool: "process", args }, lexicalContext);
    expect((await decide({ action: "kill", id: "p1" })).ruleId).toBe("no-kill");
    expect((await decide({ action: "start", command: "ls" })).decision).toBe("ask");
    const bare = policyOf("rules:\n  - { id: no-processes, decision: deny, tools: [process] }\n");
    for (const args of [
      { action: "list" },
      { action: "start", command: "ls" },
      { action: "input", id: "p1", text: "x" },
    ])
      expect((await evaluate(bare, { tool: "process", args }, lexicalContext)).decision).toBe("deny");
  });
});

describe("the policy hook looks processes up through the call's context", () => {
  it("input to python3 runs under a rule naming it; input to bash is refused with the reason", async () => {
    const processes = new FakeProcesses();
    processes.add({ shell: "python3" });
    processes.add({ shell: "bash" });
    const hook = createPolicyHook({
      policy: policyOf(`
default: ask
rules:
  - { id: repl-input, decision: allow, tools: [process], input: [python3] }
`),
      sessionId: "s1",
    });
    const tool = createProcessTool();
    const call = (id: string): BeforeToolCallContext => ({
      call: { id: "c1", name: "process", arguments: {} },
      tool,
      args: { action: "input", id, text: "1\n" },
      sandbox: new FakeSandbox(),
      sessionId: "s1",
      processes,
    });
    expect(await hook(call("p1"))).toBeUndefined();
    expect(await hook(call("p2"))).toEqual({
      block: true,
      reason:
        "Tool call refused: process part 'input to p2 (bash)' needs approval (input to process p2 (bash) may be a command it runs; no rule's input names bash) and this session is non-interactive, so it is denied. Nothing was run.",
    });
  });
});

describe("the rule form's errors", () => {
  it.each([
    [
      "rules:\n  - { id: a, decision: allow, tools: [bash], input: [python3] }\n",
      "p.yaml:2:53: rule 'a' has input, which judges the process tool only: its tools must be [process]",
    ],
    [
      "rules:\n  - { id: a, decision: allow, tools: [process], input: [python3], commands: [ls] }\n",
      "p.yaml:2:56: rule 'a' has input and commands: a rule with input takes no other matcher",
    ],
    [
      "rules:\n  - { id: a, decision: allow, tools: [process], input: [/usr/bin/python3, 'py*'] }\n",
      "p.yaml:2:57: rule 'a': input '/usr/bin/python3' is not a program name; name the command its process runs (python3, node, psql), without a directory or a wildcard\n" +
        "p.yaml:2:75: rule 'a': input 'py*' is not a program name; name the command its process runs (python3, node, psql), without a directory or a wildcard",
    ],
    [
      "rules:\n  - { id: a, decision: allow, tools: [process], actions: [output, start] }\n",
      'p.yaml:2:67: rules[0].actions[1]: expected one of "output" | "list" | "wait" | "kill"',
    ],
    [
      "rules:\n  - { id: a, decision: allow, tools: [process], input: [] }\n",
      "p.yaml:2:56: rules[0].input: must not have fewer than 1 items",
    ],
    [
      "rules:\n  - { id: a, decision: deny, tools: [process, bash], actions: [kill], input: [sh] }\n",
      "p.yaml:2:63: rule 'a' has actions, which judges the process tool only: its tools must be [process]\n" +
        "p.yaml:2:78: rule 'a' has input, which judges the process tool only: its tools must be [process]\n" +
        "p.yaml:2:78: rule 'a' has input and actions: a rule with input takes no other matcher",
    ],
  ])("%j", (text, expected) => {
    expect(loadError(text)).toBe(expected);
  });

  it("a later rule an earlier input or actions rule covers is reported as never deciding", () => {
    const layer = parsePolicyText(
      `rules:
  - { id: a, decision: deny, tools: [process], input: [python3, node] }
  - { id: b, decision: allow, tools: [process], input: [node] }
  - { id: c, decision: ask, tools: [process], actions: [kill] }
  - { id: d, decision: ask, tools: [process], input: [node] }
`,
      "p.yaml",
    );
    expect(layer.findings).toEqual([
      "p.yaml:3:11: rule 'b' never decides: the earlier rule 'a' (deny) matches everything it matches",
      "p.yaml:5:11: rule 'd' never decides: the earlier rule 'a' (deny) matches everything it matches",
    ]);
  });
});
