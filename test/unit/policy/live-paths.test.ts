/**
 * Live judgement of listings, globs and recursive searches (src/policy/live-paths.ts) through
 * evaluate() with a live context whose walk lists an in-memory workspace (the engine test
 * test/engine/policy/ordinary-live.test.ts runs the same through a real sandbox): what the
 * lexical judgement asks about is allowed when nothing the command can produce is refused, and
 * refused when something is; a lexical deny, a script that writes first, a link to a directory
 * and a walk that gives up keep the lexical answer.
 */
import { posix } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { fedOperands } from "../../../src/policy/bash/arguments.js";
import type { EvaluateContext } from "../../../src/policy/index.js";
import { evaluate, lexicalContext, loadPolicy, type Policy } from "../../../src/policy/index.js";
import type { WalkEntry } from "../../../src/policy/live-walk.js";

/** A workspace: path → `f` / `d`, or a link `{ to }` (its target, absolute). */
type Tree = Record<string, "f" | "d" | { to: string }>;

const BASE: Tree = {
  "/workspace/src": "d",
  "/workspace/src/a.ts": "f",
  "/workspace/src/b": "d",
  "/workspace/src/b/c.ts": "f",
  "/workspace/docs": "d",
  "/workspace/docs/x.md": "f",
  "/workspace/.env": "f",
  "/workspace/.git": "d",
  "/workspace/.git/config": "f",
  "/workspace/.ssh": "d",
  "/workspace/.ssh/id_rsa": "f",
};

/**
 * A live context over `tree`; `walks` counts the walks asked for; every walk gives up with
 * `giveUp`, and a walk of a directory in `locked` (one below it the sandbox user may not read).
 */
function live(tree: Tree, walks: string[] = [], giveUp = false, locked = new Set<string>()): EvaluateContext {
  const typeOf = (path: string) => {
    const t = tree[path];
    if (t === undefined) return undefined;
    return typeof t === "string" ? t : "l";
  };
  return {
    resolvePath: async (path) => {
      const t = tree[path];
      return typeof t === "object" ? t.to : posix.normalize(path);
    },
    walk: async (dir, hidden) => {
      walks.push(dir);
      if (giveUp || locked.has(dir)) return null;
      // As live-walk.ts: nothing there, or only the entry of a file.
      if (dir !== "/workspace" && typeOf(dir) === undefined) return [];
      if (dir !== "/workspace" && typeOf(dir) !== "d") return [{ path: dir, type: typeOf(dir) ?? "f" }];
      const below = Object.keys(tree)
        .filter((p) => p.startsWith(`${dir}/`))
        .filter(
          (p) =>
            hidden ||
            !p
              .slice(dir.length + 1)
              .split("/")
              .some((c) => c.startsWith(".")),
        )
        .sort();
      return [{ path: dir, type: "d" }, ...below].map((p): WalkEntry => {
        if (typeof p !== "string") return p;
        const t = tree[p];
        if (typeof t === "object") return { path: p, type: "l", to: typeOf(t.to) ?? "N" };
        return { path: p, type: t ?? "f" };
      });
    },
  };
}

describe("live judgement of listings, globs and recursive searches", () => {
  let policy: Policy;
  beforeAll(async () => {
    policy = await loadPolicy([new URL("../../../policies/default.yaml", import.meta.url).pathname]);
  });
  const decide = async (command: string, ctx: EvaluateContext) =>
    (await evaluate(policy, { tool: "bash", args: { command } }, ctx)).decision;

  it("a listing that can produce no refused file is allowed; one that can is refused", async () => {
    const command = "find src -name '*.ts' | xargs wc -l";
    expect(await decide(command, lexicalContext)).toBe("ask");
    expect(await decide(command, live(BASE))).toBe("allow");
    expect(await decide(command, live({ ...BASE, "/workspace/src/b/.env.ts": "f" }))).toBe("deny");
    expect(await decide("wc -l $(find src -name '*.ts')", live(BASE))).toBe("allow");
    // Unquoted, each printed name is a glob too: `src/id_rs[a]` may become `src/id_rsa`.
    const bracketed: Tree = { ...BASE, "/workspace/src/id_rs[a]": "f", "/workspace/src/id_rsa": "f" };
    expect(await decide("cat $(find src -name '*]')", live(bracketed))).toBe("ask");
    // Quoted it is one name, but a name holding a glob character is never judged live.
    expect(await decide("cat \"$(find src -name '*]')\"", live(bracketed))).toBe("ask");
    expect(await decide("find . -name '*.ts' | xargs cat", live(BASE))).toBe("allow");
    expect(await decide("find . -name 'id_*' | xargs cat", live(BASE))).toBe("deny");
    expect(await decide("find . -name known_hosts | xargs cat", live(BASE))).toBe("allow");
    expect(
      await decide(
        "find . -name known_hosts | xargs cat",
        live({ ...BASE, "/workspace/.ssh/known_hosts": "f" }),
      ),
    ).toBe("deny");
  });

  it("ls's output: the operands a glob matches and bare names, any path below the working directory", async () => {
    expect(await decide("ls src/*/index.ts | xargs wc -l", lexicalContext)).toBe("ask");
    expect(await decide("ls src/*/index.ts | xargs wc -l", live(BASE))).toBe("allow");
    expect(await decide("head -3 $(ls -t docs/*.md | head -1)", live(BASE))).toBe("allow");
    // A bare name from a directory operand is relative to the working directory: any path there.
    expect(await decide("ls src | xargs cat", live({ ...BASE, "/workspace/id_rsa": "f" }))).toBe("deny");
    // An operand naming a dot component lists dot names; -a, -l, `..` and `/` are not read as listings.
    expect(await decide("ls .ssh | xargs cat", live(BASE))).toBe("deny");
    expect(await decide("ls -a src | xargs cat", live(BASE))).toBe("ask");
    expect(await decide("ls -l src | xargs cat", live(BASE))).toBe("ask");
    expect(await decide("ls ../x | xargs cat", live(BASE))).toBe("ask");
  });

  it("a found path spliced into a longer word names another file: any path (fedOperands)", () => {
    const words = (...w: string[]) => w.map((value) => ({ value, expands: false }));
    const listing = { dirs: ["."], names: ["*.md"], hidden: true };
    const fed = (label: string, ...w: string[]) =>
      fedOperands(label, words(...w), listing).map((p) => p.target);
    expect(fed("xargs", "xargs", "-I{}", "cat", "{}")).toEqual(["/workspace/*.md", "/workspace/\u0001/*.md"]);
    for (const argv of [
      ["xargs", "-I{}", "cat", "{}/../.env"],
      ["xargs", "-I", "X", "cat", "X/../.env"],
      ["xargs", "-i", "cat", "{}/../.env"],
      ["xargs", "--replace=R", "cat", "R/x"],
    ])
      expect([argv, fed("xargs", ...argv)]).toEqual([argv, ["\u0001"]]);
    expect(fed("find", "find", ".", "-name", "*.md", "-exec", "cat", "{}/../.env", ";")).toEqual(["\u0001"]);
    expect(fed("find", "find", ".", "-name", "*.md", "-exec", "cat", "{}", ";")).toHaveLength(2);
  });

  it("a link the walk finds is judged as what it leads to too", async () => {
    const tree: Tree = { ...BASE, "/workspace/src/link.ts": { to: "/workspace/.env" } };
    expect(await decide("find src -name '*.ts' | xargs cat", live(tree))).toBe("deny");
  });

  it("a glob the shell expands: bash's dot rule, directories judged with what is below them", async () => {
    expect(await decide("ls -d */", lexicalContext)).toBe("ask");
    expect(await decide("ls -d */", live(BASE))).toBe("allow");
    expect(await decide("ls -d */", live({ ...BASE, "/workspace/keys.pem": "d" }))).toBe("deny");
    expect(await decide('for d in src/*/; do ls "$d" | wc -l; done', live(BASE))).toBe("allow");
    expect(await decide("cat src/*", live({ ...BASE, "/workspace/src/id_rsa": "f" }))).toBe("deny");
    // A bracket expression is one character, whatever it holds (`[[:alpha:]]`, `[]a]`, `[!x]`).
    const key: Tree = { ...BASE, "/workspace/src/key.pem": "f" };
    expect(await decide("cat src/[[:alpha:]]ey.pem", live(key))).toBe("deny");
    expect(await decide("cat src/[]k]ey.pem", live(key))).toBe("deny");
    expect(await decide("cat src/[!x]ey.*", live(key))).toBe("deny");
    expect(await decide("cat src/[[:alpha:]]ey.md", live(key))).toBe("allow");
    // A name is not always passed whole: split at blanks (`src/x .env` → `src/x`, `.env`), quotes
    // and backslashes read by xargs, globbed again: the lexical answer stands.
    const spaced: Tree = { ...BASE, "/workspace/src/x .env": "f", "/workspace/src/x .env.md": "f" };
    expect(await decide("for f in src/*; do cat $f; done", live(spaced))).toBe("ask");
    // Lexically too an unquoted loop variable is any text (bash/words.ts globOf).
    expect(await decide("for f in src/*]; do cat $f; done", lexicalContext)).toBe("ask");
    expect(await decide('for f in src/*.ts; do cat "$f"; done', live(BASE))).toBe("allow");
    expect(await decide("find src -name '*.md' | xargs cat", live(spaced))).toBe("ask");
    // In a directory's name too (`src/x .env/y.md` → `src/x`, `.env/y.md`).
    const dir: Tree = { ...BASE, "/workspace/src/x .env": "d", "/workspace/src/x .env/y.md": "f" };
    expect(await decide("find src -name '*.md' | xargs cat", live(dir))).toBe("ask");
    expect(
      await decide("find src -name '*.ts' | xargs cat", live({ ...BASE, "/workspace/src/a'b.ts": "f" })),
    ).toBe("ask");
    // `.`, `..` and empty components are not in the walk's paths: the lexical answer stands.
    for (const glob of ["src/*/../../.env", "src/./*.pem", "src//*.pem", "src/*/.././*.pem", "src/.*"])
      expect([glob, await decide(`cat ${glob}`, live(key))]).toEqual([glob, "ask"]);
  });

  it("keeps the lexical answer: a literal deny, a script that writes first, a link to a directory, a walk that gives up", async () => {
    // A literal path a rule denies is never walked for: `cat .ssh/id_rsa x*` stays denied.
    expect(await decide("cat .ssh/id_rsa src/*.ts", live(BASE))).toBe("deny");
    expect(await decide("cat .ssh/*", lexicalContext)).toBe("ask");
    expect(await decide("cat .ssh/*", live(BASE))).toBe("deny");
    expect(await decide("cp docs/x.md src/y.ts; find src -name '*.ts' | xargs cat", live(BASE))).toBe("ask");
    expect(
      await decide("find src -name '*.ts' > /tmp/l; find src -name '*.ts' | xargs cat", live(BASE)),
    ).toBe("ask");
    const linked: Tree = { ...BASE, "/workspace/src/k": { to: "/workspace/.ssh" } };
    expect(await decide("find src -name '*.ts' | xargs cat", live(linked))).toBe("ask");
    expect(await decide("find src -name '*.ts' | xargs cat", live(BASE, [], true))).toBe("ask");
    // A parameter's value may climb out with `..`: never walked.
    const walks: string[] = [];
    expect(await decide('cat src/"$X"', live(BASE, walks))).toBe("ask");
    expect(walks).toEqual([]);
  });

  it("a recursive search reads every file below its directories (grep -r, rg too)", async () => {
    expect(await decide("grep -r SECRET .", lexicalContext)).toBe("allow");
    expect(await decide("grep -r SECRET .", live(BASE))).toBe("deny");
    expect(await decide("grep -rn SECRET", live(BASE))).toBe("deny");
    expect(await decide("grep -r SECRET src docs", live(BASE))).toBe("allow");
    expect(await decide('fgrep -n "x" -r src', live(BASE))).toBe("allow");
    expect(await decide("grep -r -e SECRET .ssh", live(BASE))).toBe("deny");
    expect(await decide("rg SECRET", live(BASE))).toBe("deny");
    expect(await decide("rg SECRET src", live(BASE))).toBe("allow");
    expect(await decide("rg --hidden SECRET", live(BASE))).toBe("deny");
    expect(await decide("rg -uu SECRET .", live(BASE))).toBe("deny");
    expect(await decide("rg SECRET src", live({ ...BASE, "/workspace/src/x.pem": "f" }))).toBe("deny");
    expect(await decide("grep SECRET src/a.ts", live(BASE))).toBe("allow");
    // rg's -g globs are rg's, not bash's (attack-38b): never judged as a bash glob live.
    expect(await decide("rg -g '**' token", lexicalContext)).toBe("ask");
    // Live, rg's search of /workspace also reads the .env there (its dot rule is not trusted).
    expect(await decide("rg -g '**' token", live(BASE))).toBe("deny");
    expect(await decide("rg -g '*' token", live(BASE))).toBe("deny");
    expect(await decide("rg -g '*' token src", live(BASE))).toBe("ask");
    // `src/.*` may be `src/..` (bash before 5.2's globskipdots): the lexical answer stands.
    expect(await decide("grep -r SECRET src/.*", live(BASE))).toBe("ask");
  });

  // attack-38c: each of these read /workspace/.env (or .git/config, .ssh/id_rsa) in a live session
  // under default and readonly before the fix (checked with `warden exec --mode ro`).
  it("grep's recursion and pattern are read as getopt_long and argmatch read them (attack-38c)", async () => {
    // `--directories recurse` (two words), and unambiguous prefixes of long options and of -d's action.
    expect(await decide("grep --directories recurse TOKEN .", live(BASE))).toBe("deny");
    expect(await decide("grep --recur TOKEN .", live(BASE))).toBe("deny");
    expect(await decide("grep --dereference-rec TOKEN .", live(BASE))).toBe("deny");
    expect(await decide("grep --dir=rec TOKEN .", live(BASE))).toBe("deny");
    expect(await decide("grep -d rec TOKEN .", live(BASE))).toBe("deny");
    expect(await decide("grep -drecurse TOKEN .", live(BASE))).toBe("deny");
    expect(await decide("grep -d skip TOKEN src", live(BASE))).toBe("allow");
    // A pattern attached to -e / -f, or given by a prefix of --regexp: the first operand is searched.
    expect(await decide("grep -r -eTOKEN . src", live(BASE))).toBe("deny");
    expect(await decide("grep -rieTOKEN . src", live(BASE))).toBe("deny");
    expect(await decide("grep -r --regex=TOKEN . src", live(BASE))).toBe("deny");
    expect(await decide("grep -r --reg TOKEN . src", live(BASE))).toBe("deny");
    expect(await decide("rg -eTOKEN . src", live(BASE))).toBe("deny");
    expect(await decide("grep -rA 2 TOKEN src", live(BASE))).toBe("allow");
    // A word that expands may be any option or the pattern.
    expect(await decide('grep "$O" TOKEN .', live(BASE))).toBe("deny");
    expect(await decide('grep -r "$P"', live(BASE))).toBe("deny");
  });

  it("a recursive search after cd or under env -C searches there (attack-38c)", async () => {
    expect(await decide("cd src && grep -r TOKEN ..", live(BASE))).toBe("deny");
    expect(await decide("env -C /workspace grep -r TOKEN .", live(BASE))).toBe("deny");
    expect(await decide("env -C src grep -r TOKEN ..", live(BASE))).toBe("deny");
    expect(await decide("cd src && grep -r TOKEN b", live(BASE))).toBe("allow");
    expect(await decide('cd "$D" && grep -r TOKEN .', live(BASE))).not.toBe("allow");
  });

  it("a recursive search whose walk gives up is never allowed (attack-38c)", async () => {
    const tree: Tree = { ...BASE, "/workspace/locked": "d" };
    // `mkdir locked; chmod 000 locked` made the walk fail: the directory alone was judged (allow).
    expect(await decide("grep -r TOKEN .", live(tree, [], false, new Set(["/workspace"])))).toBe("ask");
    expect(await decide("grep -r TOKEN src", live(BASE, [], true))).toBe("ask");
    // Nothing there: nothing is read, unless the script may create it first.
    expect(await decide("grep -r TOKEN gone", live(BASE))).toBe("allow");
    expect(await decide("grep -r TOKEN src/a.ts", live(BASE))).toBe("allow");
    expect(await decide("mkdir -p gone && grep -r TOKEN gone", live(BASE))).not.toBe("allow");
  });

  it("rg is judged as reading dot files: an ignore file may whitelist one (attack-38c)", async () => {
    // `.ignore` holding `!.env` made `rg TOKEN` search /workspace/.env without --hidden.
    const tree: Tree = { ...BASE, "/workspace/.ignore": "f" };
    expect(await decide("rg TOKEN", live(tree))).toBe("deny");
    expect(await decide("rg TOKEN src docs", live(tree))).toBe("allow");
  });

  it("a listed name beginning with - may be an option of the next command: lexical (attack-38c)", async () => {
    // ls prints bare names: `--files0-from=lst` made wc (and du) read the files lst names (.env).
    const tree: Tree = { ...BASE, "/workspace/lst": "f", "/workspace/src/--files0-from=lst": "f" };
    expect(await decide("ls src | xargs wc -l", live(BASE))).toBe("allow");
    expect(await decide("ls src | xargs wc -l", live(tree))).toBe("ask");
    expect(await decide("wc -l $(ls src)", live(tree))).toBe("ask");
    expect(await decide("ls src | xargs du -b", live(tree))).toBe("ask");
    // git ls-files prints paths relative to the working directory, without `./`.
    const clean: Tree = { "/workspace/src": "d", "/workspace/src/a.ts": "f" };
    expect(await decide("git ls-files '*.ts' | xargs wc -l", live(clean))).toBe("allow");
    const root: Tree = { ...clean, "/workspace/--files0-from=.l.ts": "f" };
    expect(await decide("git ls-files '*.ts' | xargs wc -l", live(root))).toBe("ask");
  });

  it("a recursive search that follows a link to a directory is never allowed (attack-38c)", async () => {
    // `src/up → /workspace`: `grep -R TOKEN src` read /workspace/.env through src/up/.env.
    const tree: Tree = { ...BASE, "/workspace": "d", "/workspace/src/up": { to: "/workspace" } };
    expect(await decide("grep -R TOKEN src", live(tree))).toBe("ask");
    expect(await decide("grep --dereference-recursive TOKEN src", live(tree))).toBe("ask");
    expect(await decide("rg -L TOKEN src", live(tree))).toBe("ask");
    expect(await decide("rg --follow TOKEN src", live(tree))).toBe("ask");
    // grep -r and rg without -L do not follow it (judged as its own path and its target).
    expect(await decide("grep -r TOKEN src", live(tree))).toBe("allow");
    expect(await decide("grep -R TOKEN src", live(BASE))).toBe("allow");
  });

  it("git grep of untracked files is a recursive search (attack-38c)", async () => {
    // `git grep --no-index TOKEN` printed /workspace/.env and .ssh/id_rsa under default.
    expect(await decide("git grep --no-index TOKEN", live(BASE))).toBe("deny");
    expect(await decide("git grep --untracked TOKEN", live(BASE))).toBe("deny");
    expect(await decide("git grep --no-ind TOKEN", live(BASE))).toBe("deny");
    expect(await decide("git -c grep.fallbackToNoIndex=true grep TOKEN", live(BASE))).not.toBe("allow");
    expect(await decide("git grep --no-index TOKEN", live({ "/workspace/src": "d" }))).toBe("allow");
    // Tracked files only: judged as before.
    expect(await decide("git grep TOKEN", live(BASE))).toBe("allow");
  });
});
