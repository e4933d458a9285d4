/**
 * attack-37 F5: a wrapper that changes directory for its payload (`env -C DIR`, `env --chdir=DIR`
 * and its abbreviations, `sudo -D DIR`) runs the payload in DIR. Its relative arguments, the
 * redirections of an inner `bash -c`, and git's repository discovery are judged there
 * (bash/wrapper-options.ts reads the option, bash/parts.ts inDirectory rebases the parts); a DIR
 * that is not literal makes them paths in any directory (arguments) or opaque (redirections), as a
 * `cd` to an unknown directory does. Before, every one of these was judged against /workspace:
 * `env -C .git cat config` was allowed under default, readonly and ci and printed .git/config.
 */
import { describe, expect, it } from "vitest";
import {
  analyzeBash,
  type EvaluateContext,
  evaluate,
  lexicalContext,
  type Policy,
  parsePolicyText,
} from "../../../src/policy/index.js";
import { decisionRulePart, shippedPolicies } from "../../helpers/policy.js";

const NAMES = ["default", "readonly", "ci"] as const;
const shipped = shippedPolicies(...NAMES);

const decide = async (name: (typeof NAMES)[number], command: string, ctx?: EvaluateContext) =>
  decisionRulePart(await shipped.decide(name, command, ctx));

describe("a wrapper's payload is judged in the directory the wrapper runs it in (F5)", () => {
  const SECRET = ["deny", "deny-secrets", "/workspace/.git/config"];
  it.each([
    "env -C .git cat config",
    "env --chdir=.git cat config",
    "env --chdir .git cat config",
    "env --chd=.git cat config",
    "env --c .git cat config",
    "env -C.git cat config",
    "env -iC.git cat config",
    "env -u X -C .git -- cat config",
    "env -C .git grep -n url config",
    "env -C /workspace/.git cat config",
    "env -C src env -C ../.git cat config",
    "nice env -C .git cat config",
    "busybox env -C .git cat config",
  ])("%s reads /workspace/.git/config: denied under default, readonly and ci", async (command) => {
    for (const name of NAMES) expect([name, ...(await decide(name, command))]).toEqual([name, ...SECRET]);
  });

  it("a submodule's config below the directory: env -C .git/modules/lib cat config", async () => {
    for (const name of NAMES)
      expect(await decide(name, "env -C .git/modules/lib cat config")).toEqual([
        "deny",
        "deny-secrets",
        "/workspace/.git/modules/lib/config",
      ]);
  });

  it("an inner bash -c's redirection is written in the directory: env -C .git bash -c 'echo x >> config'", async () => {
    for (const name of NAMES)
      expect(await decide(name, "env -C .git bash -c 'echo x >> config'")).toEqual(SECRET);
  });

  it("a write outside the workspace through the directory: env -C /home/sandbox bash -c 'printf x > .gitconfig'", async () => {
    const command = "env -C /home/sandbox bash -c 'printf x > .gitconfig'";
    expect(await decide("default", command)).toEqual(["ask", "default", "/home/sandbox/.gitconfig"]);
    expect(await decide("ci", command)).toEqual(["deny", "default", "/home/sandbox/.gitconfig"]);
    expect(await decide("readonly", command)).toEqual([
      "deny",
      "deny-file-writes",
      "/home/sandbox/.gitconfig",
    ]);
  });

  it("a directory that is not literal: relative arguments may be anywhere, a relative redirection is opaque", async () => {
    expect(
      analyzeBash('env -C "$D" cat config')
        .filter((p) => p.kind === "argument")
        .map((p) => p.target),
    ).toContain("\u0001/config");
    expect((await decide("default", 'env -C "$D" cat config')).slice(0, 2)).toEqual(["ask", "default"]);
    expect((await decide("ci", 'env -C "$D" cat config')).slice(0, 2)).toEqual(["deny", "default"]);
    const opaque = analyzeBash("env -C \"$D\" bash -c 'echo x > config'").find((p) => p.kind === "opaque");
    expect(opaque).toMatchObject({
      kind: "opaque",
      why: "relative write target in a directory the wrapper names that is not known",
    });
  });

  it("the directory composes with the words: relative joins, absolute stays, `..` climbs back", () => {
    const targets = (command: string) =>
      analyzeBash(command)
        .filter((p) => p.kind === "argument" && p.text.startsWith("cat "))
        .map((p) => (p.kind === "argument" ? p.target : ""));
    expect(targets("env -C .git cat config")).toEqual([".git/config"]);
    expect(targets("env -C src cat ../.env")).toEqual([".env"]);
    expect(targets("env -C src cat /etc/hosts")).toEqual(["/etc/hosts"]);
    expect(targets("env -C src env -C ../.git cat config")).toEqual([".git/config"]);
    expect(targets("env -C /home/sandbox cat .gitconfig")).toEqual(["/home/sandbox/.gitconfig"]);
  });

  it("a descriptor opened before the change, or a relative descriptor name after it, is opaque", async () => {
    expect(await decide("default", "env -C .git cat /dev/fd/3/x 3<y")).toEqual([
      "ask",
      null,
      "cat /dev/fd/3/x",
    ]);
    expect(await decide("readonly", "env -C .git cat ../dev/stdout")).toEqual([
      "deny",
      null,
      "cat ../dev/stdout",
    ]);
  });

  it("ordinary forms stay allowed: env -C src cat main.ts, env -C src grep -rn foo .", async () => {
    for (const name of NAMES) {
      expect(await decide(name, "env -C src cat main.ts")).toEqual(["allow", null, "env -C src cat main.ts"]);
      expect((await decide(name, "env -C src grep -rn foo ."))[0]).toBe("allow");
    }
  });

  it("git run by env -C finds its repository there: the git-config check reads that repository's config", async () => {
    const files: Record<string, string> = {
      "/workspace/sub/.git/config": "[core]\n\tfsmonitor = touch /workspace/pwned\n",
      "/workspace/sub/.git/HEAD": "ref: refs/heads/main\n",
    };
    const ctx: EvaluateContext = {
      resolvePath: async (p) => p,
      readText: async (p) => files[p] ?? null,
    };
    expect(await decide("default", "git status", ctx)).toEqual([
      "allow",
      "allow-read-only-commands",
      "git status",
    ]);
    const d = await shipped.decide("default", "env -C sub git status", ctx);
    expect([d.decision, d.part]).toEqual(["ask", "git -C sub status"]);
    expect(d.reason).toBe(
      "git would run a program its configuration names (core.fsmonitor = touch /workspace/pwned in /workspace/sub/.git/config)",
    );
    const unknown = await shipped.decide("default", 'env -C "$D" git status', ctx);
    expect(unknown.decision).toBe("ask");
  });

  it("a `..` after a change of directory is resolved, so a rule anchored on a directory sees it", async () => {
    const text =
      'name: p\ndefault: allow\nrules:\n  - id: deny-private\n    decision: deny\n    tools: [bash]\n    paths: ["/workspace/private/**"]\n';
    const policy: Policy = { layers: [parsePolicyText(text, "p.yaml")] };
    const decision = async (command: string) =>
      (await evaluate(policy, { tool: "bash", args: { command } }, lexicalContext)).decision;
    // Before, the first two were allowed: `/workspace/a/../private/x` was matched as spelled.
    expect(await decision("cd a; cat ../private/x")).toBe("deny");
    expect(await decision("cd a; env -C ../private cat x")).toBe("deny");
    expect(await decision('env -C "$D" cat ../private/x')).toBe("ask");
    expect(await decision("env -C a env -C ../private cat x")).toBe("deny");
    expect(await decision("cd a; cat ../b/x")).toBe("allow");
  });
});
