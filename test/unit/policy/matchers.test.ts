import { describe, expect, it } from "vitest";
import {
  type ArgWord,
  matchCommand,
  matchGlob,
  type PolicyRule,
  patternWords,
  ruleMatches,
  type Subject,
} from "../../../src/policy/index.js";

const lit = (...words: string[]): ArgWord[] => words.map((value) => ({ value, expands: false }));
const unknown: ArgWord = { value: null, expands: false };

describe("matchGlob (canonical paths, whole components)", () => {
  it("/workspace/** matches the workspace and below, never a sibling with the same prefix", () => {
    expect(matchGlob("/workspace/**", "/workspace")).toBe(true);
    expect(matchGlob("/workspace/**", "/workspace/")).toBe(true);
    expect(matchGlob("/workspace/**", "/workspace/src/a.ts")).toBe(true);
    expect(matchGlob("/workspace/**", "/workspace/.git/config")).toBe(true);
    expect(matchGlob("/workspace/**", "/workspace-evil")).toBe(false);
    expect(matchGlob("/workspace/**", "/workspace-evil/x")).toBe(false);
    expect(matchGlob("/workspace/**", "/")).toBe(false);
  });

  it("a pattern without a leading slash matches at any depth, by whole name", () => {
    expect(matchGlob("*.pem", "/workspace/certs/server.pem")).toBe(true);
    expect(matchGlob("*.pem", "/workspace/server.pem.txt")).toBe(false);
    expect(matchGlob("id_*", "/home/u/.ssh/id_ed25519")).toBe(true);
    expect(matchGlob("**/.env", "/workspace/.env")).toBe(true);
    expect(matchGlob("**/.env", "/workspace/a/.env")).toBe(true);
    expect(matchGlob("**/.env", "/workspace/.envrc")).toBe(false);
    expect(matchGlob("**/.git/config", "/workspace/.git/config")).toBe(true);
    expect(matchGlob("**/.git/config", "/workspace/.git/configs")).toBe(false);
  });

  it("supports ?, classes, braces and ** in the middle", () => {
    expect(matchGlob("/a/**/b", "/a/b")).toBe(true);
    expect(matchGlob("/a/**/b", "/a/x/y/b")).toBe(true);
    expect(matchGlob("/a/**/b", "/a/x/y/bc")).toBe(false);
    expect(matchGlob("/a/?.ts", "/a/x.ts")).toBe(true);
    expect(matchGlob("/a/?.ts", "/a/xy.ts")).toBe(false);
    expect(matchGlob("/a/[xy].ts", "/a/y.ts")).toBe(true);
    expect(matchGlob("/a/[!xy].ts", "/a/y.ts")).toBe(false);
    expect(matchGlob("/a/*.{js,ts}", "/a/m.ts")).toBe(true);
    expect(matchGlob("/a/*.{js,ts}", "/a/m.rs")).toBe(false);
    expect(matchGlob("/dev/null", "/dev/null")).toBe(true);
    expect(matchGlob("/a/*", "/a/b/c")).toBe(false);
  });
});

describe("matchCommand (argv words, not string prefixes)", () => {
  it("a pattern is a prefix of whole words", () => {
    const p = patternWords("git status");
    expect(matchCommand(p, lit("git", "status"), "allow")).toBe(true);
    expect(matchCommand(p, lit("git", "status", "--short"), "allow")).toBe(true);
    expect(matchCommand(p, lit("git", "statusx"), "allow")).toBe(false);
    expect(matchCommand(p, lit("git"), "allow")).toBe(false);
    expect(matchCommand(patternWords("rm"), lit("rmdir", "x"), "restrict")).toBe(false);
  });

  it("a lone * matches any run of words; other wildcards stay within one word", () => {
    expect(matchCommand(patternWords("git diff *"), lit("git", "diff"), "allow")).toBe(true);
    expect(matchCommand(patternWords("npm run test*"), lit("npm", "run", "test:unit"), "allow")).toBe(true);
    expect(matchCommand(patternWords("npm run test*"), lit("npm", "run", "build"), "allow")).toBe(false);
    const del = patternWords("find * -delete");
    expect(matchCommand(del, lit("find", ".", "-name", "x", "-delete"), "restrict")).toBe(true);
    expect(matchCommand(del, lit("find", ".", "-name", "x"), "restrict")).toBe(false);
  });

  it("matches the command name by basename; allow needs a system bin directory", () => {
    const rm = patternWords("rm");
    expect(matchCommand(rm, lit("/bin/rm", "-rf", "x"), "restrict")).toBe(true);
    expect(matchCommand(rm, lit("./rm"), "restrict")).toBe(true);
    const git = patternWords("git status");
    expect(matchCommand(git, lit("/usr/bin/git", "status"), "allow")).toBe(true);
    expect(matchCommand(git, lit("./git", "status"), "allow")).toBe(false);
    expect(matchCommand(git, lit("/tmp/git", "status"), "allow")).toBe(false);
  });

  it("uncertain words match anything in deny/ask rules and only * in allow rules", () => {
    const push = patternWords("git push");
    expect(matchCommand(push, [...lit("git"), unknown], "restrict")).toBe(true);
    expect(matchCommand(push, [...lit("git"), unknown], "allow")).toBe(false);
    expect(matchCommand(patternWords("git *"), [...lit("git"), unknown], "allow")).toBe(true);
    const glob: ArgWord = { value: "pu*", expands: true };
    expect(matchCommand(push, [...lit("git"), glob], "restrict")).toBe(true);
    expect(matchCommand(push, [...lit("git"), glob], "allow")).toBe(false);
  });
});

describe("ruleMatches (patterns indexed by command name)", () => {
  const rule = (decision: "allow" | "deny", commands: string[]): PolicyRule => ({
    id: "r",
    decision,
    tools: ["bash"],
    commands,
  });
  const command = (...words: (string | null)[]): Subject => ({
    kind: "command",
    tools: ["bash"],
    argv: words.map((value) => ({ value, expands: false })),
    role: "command",
    text: words.join(" "),
    via: [],
  });

  it("finds a pattern by the command's basename, glob names and a lone * for every command", () => {
    const r = rule("deny", ["git push", "/usr/bin/curl", "py* -c", "* --force"]);
    expect(ruleMatches(r, command("git", "push"))).toBe(true);
    expect(ruleMatches(r, command("/usr/bin/git", "push", "-f"))).toBe(true);
    expect(ruleMatches(r, command("curl", "x"))).toBe(true);
    expect(ruleMatches(r, command("python3", "-c", "1"))).toBe(true);
    expect(ruleMatches(r, command("make", "--force"))).toBe(true);
    expect(ruleMatches(r, command("git", "status"))).toBe(false);
    expect(ruleMatches(r, command("make", "all"))).toBe(false);
  });

  it("a command name that is not literal meets every pattern of a deny rule and none of an allow rule", () => {
    expect(ruleMatches(rule("deny", ["git push"]), command(null, "push"))).toBe(true);
    expect(ruleMatches(rule("allow", ["git push"]), command(null, "push"))).toBe(false);
  });
});
