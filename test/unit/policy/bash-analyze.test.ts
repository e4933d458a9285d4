import { beforeAll, describe, expect, it } from "vitest";
import { analyzeBash, type BashPart, loadBashParser } from "../../../src/policy/index.js";

beforeAll(async () => {
  await loadBashParser();
});

/**
 * Compact view of the parts: `cmd:argv words` (null as ?), `opaque:why`, `write:target`, `read:target`.
 * File arguments (`argument` parts, and the files the command model says a command writes) are
 * left out here and checked on their own below.
 */
function view(script: string): string[] {
  return analyzeBash(script)
    .filter((p) => p.kind !== "argument" && !(p.kind === "write" && p.argument))
    .map((p: BashPart) => {
      if (p.kind === "command") {
        const argv = p.argv.map((w) => (w.value === null ? "?" : w.value)).join(" ");
        return `${p.role === "wrapper" ? "wrap" : "cmd"}:${argv}${p.via.length ? ` <${p.via.join(">")}` : ""}`;
      }
      if (p.kind === "opaque") return `opaque:${p.why}`;
      return `${p.kind}:${p.target}`;
    });
}

function argumentsOf(script: string): string[] {
  return analyzeBash(script).flatMap((p) => (p.kind === "argument" ? [p.target] : []));
}

describe("analyzeBash: a command's file arguments", () => {
  it("lists literal words, --option=value values, attached short values, rev:path; expands ~/ to the sandbox home", () => {
    expect(argumentsOf("cat .env src/a.ts")).toEqual([".env", "src/a.ts"]);
    expect(argumentsOf("grep -rn --file=keys.pem foo .")).toEqual(["n", "keys.pem", "foo", "."]);
    expect(argumentsOf("grep -f.env -r . && git show HEAD:.env")).toEqual([
      ".env",
      ".",
      "show",
      "HEAD:.env",
      ".env",
    ]);
    expect(argumentsOf("echo $(cat .env) ~/x *.pem")).toEqual([".env"]);
  });

  it("issue 13: words the shell expands become absolute globs of every path they may name", () => {
    const globs = (script: string) =>
      analyzeBash(script).flatMap((p) => (p.kind === "argument" ? [[p.target, p.glob ?? false]] : []));
    expect(globs("cat ~/.ssh/id_rsa $HOME/x *.pem {.env,}")).toEqual([
      ["/home/sandbox/.ssh/id_rsa", false],
      ["\u0001/x", true],
      ["/workspace/*.pem", true],
      ["/workspace/.env", false],
      ["/workspace/", false],
    ]);
    expect(globs("cat .en? ~/.ssh/*")).toEqual([
      ["/workspace/.en?", true],
      ["/home/sandbox/.ssh/*", true],
    ]);
  });
});

describe("analyzeBash: every simple command", () => {
  it("lists, newlines, pipelines, subshells, brace groups, functions, loops", () => {
    expect(view("a && b || c; d & e")).toEqual(["cmd:a", "cmd:b", "cmd:c", "cmd:d", "cmd:e"]);
    expect(view("a\nb")).toEqual(["cmd:a", "cmd:b"]);
    expect(view("a | b |& c")).toEqual(["cmd:a", "cmd:b", "cmd:c"]);
    expect(view("(a; (b)) && { c; }")).toEqual(["cmd:a", "cmd:b", "cmd:c"]);
    expect(view("f() { rm x; }; f")).toEqual(["cmd:rm x", "cmd:f"]);
    expect(view("for i in $(seq 2); do echo $i; done")).toEqual(["cmd:seq 2", "cmd:echo ?"]);
    expect(view("if a; then b; elif c; then d; else e; fi")).toEqual([
      "cmd:a",
      "cmd:b",
      "cmd:c",
      "cmd:d",
      "cmd:e",
    ]);
  });

  it("command and process substitutions anywhere: arguments, assignments, here-docs, redirect targets", () => {
    expect(view("git status $(rm -rf src)")).toEqual(["cmd:git status ?", "cmd:rm -rf src"]);
    expect(view("echo `id`")).toEqual(["cmd:echo ?", "cmd:id"]);
    expect(view("X=$(touch /workspace/p) npm --version")).toEqual([
      "cmd:npm --version",
      "cmd:touch /workspace/p",
    ]);
    expect(view("export A=$(id)")).toEqual(["cmd:id"]);
    expect(view("cat <(a) >(b)")).toEqual(["cmd:cat ? ?", "cmd:a", "cmd:b"]);
    expect(view("cat <<EOF\n$(rm x)\nEOF")).toEqual(["cmd:cat", "cmd:rm x"]);
    expect(view("cat <<'EOF'\n$(rm x)\nEOF")).toEqual(["cmd:cat"]);
    expect(view("echo > $(mktemp)")).toEqual([
      "cmd:echo",
      "opaque:the write target is not literal",
      "cmd:mktemp",
    ]);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a bash parameter expansion, not a template
    expect(view("echo ${X:-$(id)}")).toEqual(["cmd:echo ?", "cmd:id"]);
  });

  it("resolves quoting to the literal word", () => {
    expect(view("r''m -rf src")).toEqual(["cmd:rm -rf src"]);
    expect(view('\\rm "a\\"b" \'c d\'')).toEqual(['cmd:rm a"b c d']);
    expect(view("$'\\x72\\155' x")).toEqual(["cmd:rm x"]);
    expect(view('"$X" status')).toEqual(["opaque:the command name is not literal"]);
  });

  it("unwraps wrappers with a visible payload", () => {
    expect(view("env -i A=1 nice -n 5 timeout 5 rm x")).toEqual([
      "wrap:env -i A=1 nice -n 5 timeout 5 rm x",
      "wrap:nice -n 5 timeout 5 rm x <env",
      "wrap:timeout 5 rm x <env>nice",
      "cmd:rm x <env>nice>timeout",
    ]);
    expect(view("sudo -u root rm x")).toEqual(["cmd:sudo -u root rm x", "cmd:rm x <sudo"]);
    expect(view("ls | xargs rm -f")).toEqual([
      "cmd:ls",
      "wrap:xargs rm -f",
      "cmd:rm -f ? <xargs",
      "opaque:the write target is not literal",
    ]);
    expect(view("find . -exec rm {} \\;")).toEqual([
      "cmd:find . -exec rm {} ;",
      "cmd:rm ? <find",
      "opaque:the write target is not literal",
    ]);
    expect(view("command -v rm")).toEqual(["cmd:command -v rm"]);
    expect(view("find . -delete")).toEqual([
      "cmd:find . -delete",
      "cmd:rm ? <find",
      "opaque:the write target is not literal",
    ]);
    expect(view("bash -c 'git push origin main'")).toEqual([
      "wrap:bash -c git push origin main",
      "cmd:git push origin main <bash -c",
    ]);
    expect(view("command -p nohup time rm x")).toEqual([
      "wrap:command -p nohup time rm x",
      "wrap:nohup time rm x <command",
      "wrap:time rm x <command>nohup",
      "cmd:rm x <command>nohup>time",
    ]);
  });

  it("what cannot be reduced is opaque", () => {
    expect(view("git status | sh")).toEqual([
      "cmd:git status",
      "wrap:sh",
      "opaque:sh reads commands from stdin",
    ]);
    expect(view('bash -c "$X"')).toEqual([
      "wrap:bash -c ?",
      "opaque:bash -c with a script that is not a literal string",
    ]);
    expect(view("eval 'rm x'")).toEqual([
      "wrap:eval rm x",
      "opaque:eval runs a string as shell code",
      "cmd:rm x <eval",
    ]);
    expect(view("$CMD x")).toEqual(["opaque:the command name is not literal"]);
    expect(view("/bin/r? x")).toEqual(["opaque:the command name may be expanded by the shell"]);
    expect(view("PATH=. git status")).toEqual([
      "cmd:git status",
      "opaque:assigning PATH changes what commands run",
    ]);
    expect(view("ls; (").some((p) => p.startsWith("opaque:the script does not parse"))).toBe(true);
    expect(view("source x.sh")).toEqual(["wrap:source x.sh", "opaque:source runs a script file"]);
  });

  it("redirections: output targets are writes, input targets reads, fd duplications nothing", () => {
    expect(view("cat a > b 2>&1 < c 2>/dev/null")).toEqual([
      "cmd:cat a",
      "write:b",
      "read:c",
      "write:/dev/null",
    ]);
    expect(view("ls &>> log")).toEqual(["cmd:ls", "write:log"]);
    expect(view("cd /tmp && echo x > f")).toEqual([
      "cmd:cd /tmp",
      "cmd:echo x",
      "opaque:relative write target after a change of directory",
    ]);
  });
});

describe("analyzeBash: follow-up argument paths", () => {
  const globs = (script: string) =>
    analyzeBash(script).flatMap((p) => (p.kind === "argument" ? [[p.target, p.glob ?? false]] : []));

  it("judges relative paths after cd below its literal target and the directories before it", () => {
    expect(globs("cd /etc; cat shadow")).toEqual([
      ["/etc", false],
      ["/workspace/shadow", false],
      ["/etc/shadow", false],
    ]);
    expect(globs("cd src/../.git && cat config")).toContainEqual(["/workspace/.git/config", false]);
    expect(globs('cd "$X"; cat config')).toContainEqual(["\u0001/config", true]);
    expect(globs("cd -; cat config")).toContainEqual(["\u0001/config", true]);
  });

  it("reads every suffix of a short-option cluster, git pathspec globs and xargs' unknown operands", () => {
    expect(globs("grep -hrf.env .")).toEqual([
      ["rf.env", false],
      ["f.env", false],
      [".env", false],
      [".", false],
    ]);
    expect(globs("git log -- '.e*'")).toContainEqual(["/workspace/\u0001.e\u0001", true]);
    expect(globs("xargs cat")).toContainEqual(["\u0001", true]);
    expect(globs("xargs echo")).toEqual([["echo", false]]);
  });
});
