/**
 * Issue 13 item 3: a word with a glob, brace, tilde or parameter expansion is not auto-allowed when
 * some expansion of it could match a denied path; attached option values and `rev:path` words are
 * judged as paths too.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { evaluate, lexicalContext, loadPolicy, type Policy } from "../../../src/policy/index.js";
import { expandBraces, mayOverlap, wordPathGlobs } from "../../../src/policy/path-overlap.js";

const shipped = (name: string) => new URL(`../../../policies/${name}.yaml`, import.meta.url).pathname;
let policies: Record<string, Policy>;
beforeAll(async () => {
  policies = {};
  for (const name of ["default", "ci", "readonly", "strict"])
    policies[name] = await loadPolicy([shipped(name)]);
});

const decide = (policy: string, command: string) =>
  evaluate(policies[policy] as Policy, { tool: "bash", args: { command } }, lexicalContext);

describe("mayOverlap", () => {
  it.each([
    ["**/.env", "/workspace/.en?", true],
    ["**/.env", "/workspace/*", false],
    ["**/.env", "/workspace/.*", true],
    ["**/.ssh/**", "/home/sandbox/.ssh/*", true],
    ["*.pem", "/workspace/src/*.ts", false],
    ["*.pem", "/workspace/*", true],
    ["**/.env", "\u0001/x", false],
    ["**/.env", "\u0001", true],
    ["**/.env", "/workspace/\u0001.env", true],
    ["/etc/**", "/workspace/[ab]*", false],
  ])("rule %s and word %j: %s", (rule, word, expected) => {
    expect(mayOverlap(rule, word)).toBe(expected);
  });

  it("expands braces bash's way, nested, and gives up past 64 alternatives", () => {
    expect(expandBraces("{.env,}")).toEqual([".env", ""]);
    expect(expandBraces("a{b,{c,d}}e")).toEqual(["abe", "ace", "ade"]);
    expect(expandBraces("{x}")).toEqual(["\\{x\\}"]);
    expect(expandBraces("{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}")).toBeNull();
  });
});

describe("secret paths reached through globs and expansions are refused under every shipped policy", () => {
  it.each([
    "cat .en?",
    "cat {.env,}",
    "cat ~/.ssh/*",
    "git show HEAD:.env",
    "grep -f.env -r .",
    'cat "$D"/.env',
    "cat .e*v",
    "cat $(echo .env)",
    "head -c 100 ./.[e]nv",
    "grep -r x ~/.ssh",
  ])("%s", async (command) => {
    for (const name of ["default", "ci", "readonly", "strict"]) {
      const d = await decide(name, command);
      expect(d.decision, `${name}: ${JSON.stringify(d.trail)}`).not.toBe("allow");
    }
  });

  it("a brace that expands to a literal secret is denied by the rule, a glob that may is asked", async () => {
    expect(await decide("default", "cat {.env,}")).toMatchObject({
      decision: "deny",
      ruleId: "deny-secrets",
    });
    const d = await decide("default", "cat .en?");
    expect(d).toMatchObject({ decision: "ask", part: "/workspace/.en?" });
    expect(d.reason).toMatch(/^may expand to a path that rule 'deny-secrets' denies/);
  });

  it.each(["cat src/*.ts", "wc -l src/*.ts", "ls src/{a,b}.ts", "echo $HOME", "grep -rn TODO src/*.ts"])(
    "%s stays allowed under default",
    async (command) => {
      expect((await decide("default", command)).decision).toBe("allow");
    },
  );
});

describe("wordPathGlobs: ~user homes", () => {
  it("keeps the rest of ~root/… and takes an unknown user's home as anywhere", () => {
    expect(wordPathGlobs("~root/.ssh/id_rsa", "/workspace")).toEqual(["/root/.ssh/id_rsa"]);
    expect(wordPathGlobs("~root", "/workspace")).toEqual(["/root"]);
    expect(wordPathGlobs("~bob/.ssh/id_rsa", "/workspace")).toEqual(["\u0001/.ssh/id_rsa"]);
    expect(wordPathGlobs("~+/x", "/workspace")).toEqual(["\u0001/x"]);
  });
});
