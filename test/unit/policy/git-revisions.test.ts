/**
 * Issue 37, item 3: git's object names (gitrevisions(7)) meet path rules. A committed `.env` is in
 * `.git/objects` whether or not the file is copied into the sandbox, so `HEAD^{tree}:.env`,
 * `:0:.env`, `HEAD@{1}:.env` and a blob id read it as surely as `cat .env`; each gets the exact
 * decision under default, ci and readonly, and ordinary git use stays allowed.
 */
import { describe, expect, it } from "vitest";
import { ANY_TEXT } from "../../../src/policy/command-pattern.js";
import { gitObjectReads, parseObjectName } from "../../../src/policy/commands/git-revisions.js";
import type { ArgWord } from "../../../src/policy/index.js";
import { shippedPolicies } from "../../helpers/policy.js";

/** The decisions under default, ci and readonly, one letter each (A allow, ? ask, d deny). */
const shipped = shippedPolicies("default", "ci", "readonly");
const decisions = shipped.letters;

const literal = (...words: string[]): ArgWord[] => words.map((value) => ({ value, expands: false }));

describe("parseObjectName (gitrevisions(7), get_oid_with_context)", () => {
  it.each([
    ["HEAD^{tree}:.env", { kind: "path", path: ".env" }],
    ["HEAD^{commit}:.env", { kind: "path", path: ".env" }],
    ["HEAD@{1}:.env", { kind: "path", path: ".env" }],
    ["HEAD@{1:2}:x", { kind: "path", path: "x" }],
    ["HEAD^{/fix: a bug}:x", { kind: "path", path: "x" }],
    [":0:.env", { kind: "path", path: ".env" }],
    [":3:a:b", { kind: "path", path: "a:b" }],
    [":.env", { kind: "path", path: ".env" }],
    ["main~2:src/x.ts", { kind: "path", path: "src/x.ts" }],
    ["HEAD:", { kind: "path", path: "" }],
    [":/fix:.env", { kind: "commit" }],
    ["HEAD", { kind: "commit" }],
    ["HEAD~3", { kind: "commit" }],
    ["main..feature", { kind: "commit" }],
    ["@{-1}", { kind: "commit" }],
    ["HEAD^{tree}", { kind: "tree" }],
    ["3b18e51", { kind: "object" }],
    ["3b18e512dba79e4c8300dd08aeb37f8e728b8dad", { kind: "object" }],
    ["3b18e51^{}", { kind: "object" }],
    ["3b18e51:key", { kind: "object" }],
    ["v1^{blob}", { kind: "object" }],
    ["HEAD..3b18e51", { kind: "object" }],
    ["3b18e51~0", { kind: "commit" }],
    ["3b18e51^{commit}", { kind: "commit" }],
    ["3b18e51^{tree}", { kind: "tree" }],
    ["abc", { kind: "commit" }],
  ])("%s is %j", (name, expected) => {
    expect(parseObjectName(name)).toEqual(expected);
  });
});

describe("gitObjectReads", () => {
  it("REV:PATH is a read of PATH from the repository's top, ./PATH from the working directory, and in a -C directory", () => {
    expect(gitObjectReads(literal("git", "show", "HEAD:sub/.env"))).toEqual([{ target: "sub/.env" }]);
    expect(gitObjectReads(literal("git", "show", "HEAD:./.env"))).toEqual([{ target: "./.env" }]);
    expect(gitObjectReads(literal("git", "-C", "lib", "cat-file", "-p", ":0:key"))).toEqual([
      { target: "key" },
      { target: "lib/key" },
    ]);
  });

  it("a raw object id may be any file where git takes any object, and is free where it takes only commits", () => {
    const any = (name: string) => ({
      target: ANY_TEXT,
      glob: true,
      why: `git object ${name} is not tied to a path: it may be any file's content (name a commit as ${name}^{commit}, a file as REV:PATH)`,
    });
    expect(gitObjectReads(literal("git", "show", "3b18e51"))).toEqual([any("3b18e51")]);
    expect(gitObjectReads(literal("git", "diff", "3b18e51", "9c0ffee"))).toEqual([
      any("3b18e51"),
      any("9c0ffee"),
    ]);
    expect(gitObjectReads(literal("git", "log", "3b18e51"))).toEqual([]);
    expect(gitObjectReads(literal("git", "blame", "3b18e51", "--", "a.ts"))).toEqual([]);
    expect(gitObjectReads(literal("git", "show", "--", "3b18e51"))).toEqual([]);
  });

  it("git grep REV, --cached and archive read a whole tree: any path, or below the pathspecs after --", () => {
    const whole = (sub: string) => ({
      target: ANY_TEXT,
      glob: true,
      why: `git ${sub} reads every file of a tree from git's object store, a committed secret too (name the paths after --)`,
    });
    expect(gitObjectReads(literal("git", "grep", "SECRET", "HEAD"))).toEqual([whole("grep")]);
    expect(gitObjectReads(literal("git", "grep", "--cached", "SECRET"))).toEqual([whole("grep")]);
    expect(gitObjectReads(literal("git", "grep", "-n", "-e", "x", "HEAD", "--", "src"))).toEqual([
      { target: `src/${ANY_TEXT}`, glob: true },
    ]);
    expect(gitObjectReads(literal("git", "archive", "HEAD"))).toEqual([whole("archive")]);
    expect(gitObjectReads(literal("git", "grep", "SECRET"))).toEqual([]);
    expect(gitObjectReads(literal("git", "grep", "-A", "3", "SECRET"))).toEqual([]);
  });

  it("cat-file --batch reads the objects its input names; restore --source reads the tree it names", () => {
    for (const option of ["--batch", "--batch=%(objectname)", "--batch-command"])
      expect(gitObjectReads(literal("git", "cat-file", option))).toEqual([
        { target: ANY_TEXT, glob: true, why: "git cat-file --batch reads the objects its input names" },
      ]);
    expect(gitObjectReads(literal("git", "cat-file", "--batch-check"))).toEqual([]);
    expect(gitObjectReads(literal("git", "restore", "--source=HEAD:secrets", "key"))).toEqual([
      { target: "secrets" },
      { target: `secrets/${ANY_TEXT}`, glob: true },
    ]);
  });
});

describe("issue 37 item 3: committed secrets through git's object syntax (default ci readonly)", () => {
  it.each([
    // The finding's forms: all three policies allowed each (AAA) before.
    ["git show HEAD^{tree}:.env", "ddd"],
    ["git show :0:.env", "ddd"],
    ["git show HEAD^{commit}:.env", "ddd"],
    ["git show 3b18e512dba79e4c8300dd08aeb37f8e728b8dad", "?d?"],
    ["git show 3b18e51", "?d?"],
    // The same syntax in the other subcommands that read objects.
    ["git show HEAD@{1}:.env", "ddd"],
    ["git cat-file -p HEAD^{tree}:.env", "ddd"],
    // readonly grants git cat-file (ordinary-commands corpus): a raw id then asks there, as for show.
    ["git cat-file blob 3b18e51", "?d?"],
    ["git diff 3b18e51 9c0ffee", "?d?"],
    ["git diff HEAD^{tree}:.env HEAD~1:.env", "ddd"],
    ["git grep SECRET HEAD", "?d?"],
    ["git grep --cached SECRET", "?d?"],
    ["git grep SECRET HEAD:config", "?d?"],
    ["git log -p HEAD@{0}:.env", "ddd"],
    ["git blame HEAD@{1} -- .env", "ddd"],
    ["git ls-tree HEAD:.ssh", "ddd"],
    ["git archive HEAD", "?dd"],
    ["git restore --source=HEAD^{tree}:.env x", "ddd"],
    ["git -C sub show :0:.env", "ddd"],
    ["cd sub && git show HEAD:./.env", "ddd"],
    // A glob in an option's value meets path rules like an operand's.
    ["date -f .en?", "?d?"],
    ["date --file=.en?", "?dd"],
    ["grep --file=.en? x", "?d?"],
    ["grep -f.en? x", "?d?"],
  ])("%s decides %s", async (command, expected) => {
    expect(await decisions(command)).toBe(expected);
  });

  it.each([
    "git status",
    "git log",
    "git log --oneline -n 1000",
    "git log 3b18e51..HEAD",
    "git diff",
    "git diff HEAD~1 -- src",
    "git show HEAD",
    "git show HEAD:src/x.ts",
    "git show 3b18e51^{commit}",
    "git show HEAD^{tree}",
    "git grep TODO",
    "git grep -n TODO -- src",
    "git blame -L 1,5 src/x.ts",
    "date -f dates.txt",
  ])("ordinary use stays allowed: %s", async (command) => {
    expect(await decisions(command)).toBe("AAA");
  });

  it("the reason names the object and how to name a commit or a file instead", async () => {
    const d = await shipped.decide("default", "git show 3b18e51");
    expect(d.reason).toBe(
      "git object 3b18e51 is not tied to a path: it may be any file's content (name a commit as 3b18e51^{commit}, a file as REV:PATH); it may expand to a path that rule 'deny-secrets' denies (secrets (.env, *.pem, *.key, ssh keys id_rsa etc., .git/config and its submodule / worktree / lock variants, .ssh, .netrc, .npmrc) are never read or written)",
    );
  });
});
