import { beforeAll, describe, expect, it } from "vitest";
import {
  type EvaluateContext,
  evaluate,
  lexicalContext,
  loadBashParser,
  type Policy,
  parsePolicyText,
} from "../../../src/policy/index.js";

beforeAll(async () => {
  await loadBashParser();
});

function policyOf(...texts: string[]): Policy {
  return { layers: texts.map((t, i) => parsePolicyText(t, `layer${i}.yaml`, i)) };
}

const bash = (command: string) => ({ tool: "bash", args: { command } });

const case5 = policyOf(`
default: ask
rules:
  - { id: allow-git-status, decision: allow, tools: [bash], commands: ["git status"] }
  - { id: deny-rm, decision: deny, tools: [bash], commands: [rm], reason: no deleting }
`);

const case6 = policyOf(`
default: ask
rules:
  - { id: deny-git-push, decision: deny, tools: [bash], commands: ["git push"], reason: no pushing }
  - { id: allow-npm-version, decision: allow, tools: [bash], commands: ["npm --version"] }
`);

describe("public fault cases", () => {
  it.each(["git status && rm -rf src", "git status\nrm -rf src", "git status $(rm -rf src)"])(
    "case 5: chaining, newlines and substitution: %j is denied by the rm rule",
    async (command) => {
      const d = await evaluate(case5, bash(command), lexicalContext);
      expect(d).toMatchObject({
        decision: "deny",
        ruleId: "deny-rm",
        reason: "no deleting",
        part: "rm -rf src",
      });
      expect(d.trail[0]).toMatchObject({ kind: "command", decision: "allow", ruleId: "allow-git-status" });
    },
  );

  it("case 5: `git status | sh` is not auto-allowed", async () => {
    const d = await evaluate(case5, bash("git status | sh"), lexicalContext);
    expect(d.decision).toBe("ask");
    expect(d.reason).toBe("sh reads commands from stdin");
  });

  it.each(["CI=1 git push origin main", "bash -c 'git push origin main'", "env git push origin main"])(
    "case 6: env prefixes and wrappers: %j is denied by the git push rule",
    async (command) => {
      const d = await evaluate(case6, bash(command), lexicalContext);
      expect(d).toMatchObject({ decision: "deny", ruleId: "deny-git-push", part: "git push origin main" });
    },
  );

  it("case 6: a substitution inside a stripped assignment is still checked", async () => {
    const d = await evaluate(case6, bash("X=$(touch /workspace/p) npm --version"), lexicalContext);
    expect(d.decision).toBe("ask");
    expect(d.part).toBe("touch /workspace/p");
    expect(d.trail.map((e) => [e.part, e.decision])).toEqual([
      ["npm --version", "allow"],
      ["touch /workspace/p", "ask"],
      ["/workspace/p", "ask"],
    ]);
  });

  it("case 6: opaque wrappers at least ask", async () => {
    for (const command of ['eval "git push origin main"', 'bash -c "$CMD"', "sh < script.sh"]) {
      const d = await evaluate(case6, bash(command), lexicalContext);
      expect(["ask", "deny"]).toContain(d.decision);
    }
    expect((await evaluate(case6, bash('eval "git push origin main"'), lexicalContext)).ruleId).toBe(
      "deny-git-push",
    );
  });
});

describe("evaluate: rules, defaults and layers", () => {
  it("strictest matching rule wins inside a layer; default when nothing matches", async () => {
    const p = policyOf(`
default: allow
rules:
  - { id: allow-git, decision: allow, tools: [bash], commands: [git] }
  - { id: ask-git-push, decision: ask, tools: [bash], commands: ["git push"] }
`);
    expect((await evaluate(p, bash("git push"), lexicalContext)).ruleId).toBe("ask-git-push");
    expect((await evaluate(p, bash("git log"), lexicalContext)).ruleId).toBe("allow-git");
    expect(await evaluate(p, bash("make"), lexicalContext)).toMatchObject({
      decision: "allow",
      ruleId: "default",
    });
  });

  it("a lower layer may tighten but never loosen a higher one", async () => {
    const operator = `
default: ask
rules:
  - { id: op-deny-curl, decision: deny, tools: [bash], commands: [curl] }
  - { id: op-allow-ls, decision: allow, tools: [bash], commands: [ls] }
`;
    const session = `
default: allow
rules:
  - { id: s-allow-curl, decision: allow, tools: [bash], commands: [curl] }
  - { id: s-deny-ls, decision: deny, tools: [bash], commands: [ls] }
`;
    const p = policyOf(operator, session);
    expect(await evaluate(p, bash("curl x"), lexicalContext)).toMatchObject({
      decision: "deny",
      ruleId: "op-deny-curl",
      layer: "operator",
    });
    expect(await evaluate(p, bash("ls"), lexicalContext)).toMatchObject({
      decision: "deny",
      ruleId: "s-deny-ls",
      layer: "tenant",
    });
    // The operator's default ask is not loosened by the lower layer's default allow.
    expect(await evaluate(p, bash("make"), lexicalContext)).toMatchObject({
      decision: "ask",
      layer: "operator",
    });
  });

  it("a layer without a default abstains; all abstaining means ask", async () => {
    const p = policyOf("rules:\n  - { id: allow-ls, decision: allow, tools: [bash], commands: [ls] }\n");
    expect((await evaluate(p, bash("ls"), lexicalContext)).decision).toBe("allow");
    expect(await evaluate(p, bash("make"), lexicalContext)).toMatchObject({ decision: "ask" });
  });

  it("nonInteractive turns ask into deny", async () => {
    const p = policyOf("default: ask\nnonInteractive: true\nrules: []\n");
    const d = await evaluate(p, bash("make"), lexicalContext);
    expect(d).toMatchObject({ decision: "deny", ruleId: "default" });
    expect(d.reason).toBe("would ask, and the policy is non-interactive");
  });

  it("path rules see the canonical path from resolvePath (a symlink to a secret is denied)", async () => {
    const p = policyOf(`
default: ask
rules:
  - { id: deny-secrets, decision: deny, tools: [read], paths: ["**/.env"] }
  - { id: allow-ws, decision: allow, tools: [read], paths: ["/workspace/**"] }
`);
    const links: EvaluateContext = {
      resolvePath: async (path) => (path === "/workspace/innocent.txt" ? "/workspace/.env" : path),
    };
    const read = (path: string) => ({ tool: "read", args: { path } });
    expect(await evaluate(p, read("innocent.txt"), links)).toMatchObject({
      decision: "deny",
      ruleId: "deny-secrets",
      part: "/workspace/.env",
    });
    expect((await evaluate(p, read("src/a.ts"), links)).decision).toBe("allow");
    expect((await evaluate(p, read("../workspace-evil/a"), links)).decision).toBe("ask");
  });

  it("a command's file arguments: canonical when resolvable, lexical when resolving fails (never an error)", async () => {
    const p = policyOf(`
default: allow
rules:
  - { id: deny-secrets, decision: deny, tools: [bash], paths: ["**/.env"] }
  - { id: deny-rm, decision: deny, tools: [bash], commands: [rm] }
`);
    const sandbox: EvaluateContext = {
      resolvePath: async (path) => {
        if (path === "/workspace/innocent.txt") return "/workspace/.env";
        throw new Error(`lstat ${path}: permission denied (EACCES)`);
      },
    };
    expect(await evaluate(p, bash("cat innocent.txt"), sandbox)).toMatchObject({
      decision: "deny",
      ruleId: "deny-secrets",
      part: "/workspace/.env",
    });
    expect(await evaluate(p, bash("git status && rm -rf src"), sandbox)).toMatchObject({
      decision: "deny",
      ruleId: "deny-rm",
      part: "rm -rf src",
    });
    expect((await evaluate(p, bash("cat .env"), sandbox)).ruleId).toBe("deny-secrets");
  });

  it("output redirections are judged as writes to their canonical target", async () => {
    const p = policyOf(`
default: ask
rules:
  - { id: allow-echo, decision: allow, tools: [bash], commands: [echo] }
  - { id: allow-null, decision: allow, tools: [bash], paths: [/dev/null] }
  - { id: allow-ws-write, decision: allow, tools: [write], paths: ["/workspace/**"] }
  - { id: deny-etc, decision: deny, tools: [write], paths: ["/etc/**"] }
`);
    expect((await evaluate(p, bash("echo x > out.txt 2>/dev/null"), lexicalContext)).decision).toBe("allow");
    expect(await evaluate(p, bash("echo x > /etc/hosts"), lexicalContext)).toMatchObject({
      decision: "deny",
      ruleId: "deny-etc",
      part: "/etc/hosts",
    });
  });

  it("tools other than bash and the path tools are judged by bare rules", async () => {
    const p = policyOf("default: deny\nrules:\n  - { id: allow-web, decision: allow, tools: [web_fetch] }\n");
    expect(await evaluate(p, { tool: "web_fetch", args: {} }, lexicalContext)).toMatchObject({
      decision: "allow",
      ruleId: "allow-web",
    });
    expect((await evaluate(p, { tool: "other", args: {} }, lexicalContext)).decision).toBe("deny");
  });
});
