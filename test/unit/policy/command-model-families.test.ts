/**
 * Issue 13 item 1, the rest of the model: coreutils, grep, awk, jq, python, node, pip. Each form
 * below was judged by its name alone before these entries (judgeForm returned null), so an allow
 * rule naming the command granted it in every form; and item 2: the files a form writes (`cp a
 * .env`, `dd of=.env`) are judged by path rules of the write tool, like an output redirection.
 */
import { describe, expect, it } from "vitest";
import type { ArgWord } from "../../../src/policy/command-pattern.js";
import { judgeForm } from "../../../src/policy/commands/model.js";
import { awkProgramEffect } from "../../../src/policy/commands/text.js";
import { bashDecider } from "../../helpers/policy.js";

const argv = (...words: string[]): ArgWord[] => words.map((value) => ({ value, expands: false, raw: value }));
const form = (...words: string[]) => judgeForm(argv(...words));

describe("the coreutils, text tools and runtimes are read like their own parsers", () => {
  it.each([
    [["cat", "-n", "f"], []],
    [["head", "-5", "f"], []],
    [["tail", "-n+3", "f"], []],
    [["ls", "-la", "--color=auto"], []],
    [["grep", "-rn", "--include=*.ts", "-3", "TODO", "src"], []],
    [["grep", "--inc=*.ts", "x"], []],
    [["date", "-Iseconds"], []],
    [["date", "--se", "2000-01-01"], ["write"]],
    [["file", "-C", "-m", "magic"], ["write"]],
    [["cp", "-r", "a", "b"], ["write"]],
    [["cp", "--help"], []],
    [["tee", "-a", "out"], ["write"]],
    [["dd", "if=a", "of=b"], ["write"]],
    [["uniq", "-c", "a", "b"], ["write"]],
    [["uniq", "-c", "a"], []],
    [
      ["split", "--filter=sh", "f"],
      ["exec", "write"],
    ],
    [["awk", "-F:", "{print $1}", "/etc/passwd"], []],
    [["awk", "$3 > 100 { print $1 }", "f"], []],
    [["awk", "/a|b/ { n++ } END { print n }", "f"], []],
    [["awk", 'BEGIN{system("id")}'], ["exec"]],
    [["awk", '{print | "sort"}', "f"], ["exec"]],
    [["awk", '{print $1 > "out"}', "f"], ["write"]],
    [["gawk", "-f", "prog.awk", "f"], ["exec"]],
    [["python3", "--version"], []],
    [["python3", "-V"], []],
    [["python3", "-c", "print(1)"], ["exec"]],
    [["python3", "x.py"], ["exec"]],
    [["python3"], ["exec"]],
    [["python3", "--version", "-c", "x"], ["exec"]],
    [["node", "--version"], []],
    [["node", "--check", "a.js"], []],
    [["node", "a.js"], ["exec"]],
    [["node", "-e", "1"], ["exec"]],
    [["node", "--env-file=x", "-c", "a.js"], ["exec"]],
    [["pip", "list"], []],
    [["pip", "show", "requests"], []],
    [["pip", "list", "--outd"], ["network"]],
    [
      ["pip", "install", "-r", "requirements.txt"],
      ["network", "write", "exec"],
    ],
    [["pip3", "--log=x", "freeze"], ["write"]],
    [["pip", "cache", "purge"], ["write"]],
    [["pytest", "-q", "tests"], []],
    [["pytest", "-ppwn"], ["exec"]],
    // attack-38b F4: tree -R (with -H) writes 00Tree.html in every directory it lists.
    [["tree", "-R", "-H", ".", "-L", "1"], ["write"]],
    [["tree", "-aRH", ".", "-L1"], ["write"]],
    [["tree", "-a", "-L", "2"], []],
  ])("%j: %j", (words, effects) => {
    const verdict = form(...words);
    expect(verdict?.unknown).toBeUndefined();
    expect(verdict?.effects.sort()).toEqual([...effects].sort());
  });

  it.each([
    [["cat", "--frobnicate", "f"], "--frobnicate is not an option the model knows"],
    [["head", "-Z", "f"], "-Z is not an option the model knows"],
    [["grep", "--in", "x"], "--in is not an option the model knows"],
    [["pip", "frobnicate"], "the subcommand frobnicate is not one the model knows"],
    [["python3", "-Y"], "-Y is not an option the model knows"],
  ])("%j is unknown: %s", (words, why) => {
    expect(form(...words)?.unknown).toBe(why);
  });

  it("names the files a form writes: operands, -t / -o values, dd's of=", () => {
    const writes = (...words: string[]) => form(...words)?.writes.map((w) => w.value);
    expect(writes("cp", "a", "b", "dir")).toEqual(["dir"]);
    expect(writes("cp", "-t", "dir", "a", "b")).toEqual(["dir"]);
    expect(writes("mv", "a", "b")).toEqual(["a", "b"]);
    expect(writes("ln", "-s", ".env", "x")).toEqual([".env", "x"]);
    expect(writes("dd", "if=a", "of=.env")).toEqual([".env"]);
    expect(writes("sort", "-no.env", "f")).toEqual([".env"]);
    expect(writes("sort", "--output=.env", "f")).toEqual([".env"]);
    expect(writes("tee", "-a", "x", "-")).toEqual(["x"]);
    expect(writes("uniq", "a", "b")).toEqual(["b"]);
    expect(writes("cat", "a")).toEqual([]);
  });
});

describe("awk programs", () => {
  it.each([
    ['BEGIN{print 1 / system("id") / 1}', "exec"],
    ['/"/ {system("id")}', "exec"],
    ['BEGIN{f="system"; @f("id")}', "exec"],
    ['BEGIN{"date" | getline d}', "exec"],
    ['BEGIN{print "x" |& "sh"}', "exec"],
    [
      'BEGIN{while ((getline l < ".env") > 0) print l}',
      "unknown: awk getline reads a file its program names",
    ],
    ['{ printf "%s", $0 >> "out" }', "write"],
    ["$1 > 5 || $2 ~ /a|b/ { print ($1 > 2) }", null],
    ['{ s = s "|" $1 } END { print s }', null],
  ])("%s: %s", (program, effect) => {
    expect(awkProgramEffect(program)).toBe(effect);
  });
});

describe("the files a form writes meet path rules of the write tool", () => {
  const decide = bashDecider([
    "default: ask",
    "rules:",
    "  - { id: deny-etc-writes, decision: deny, tools: [write], paths: ['/etc/**', '**/.env'] }",
    "  - { id: allow-writes, decision: allow, tools: [write], paths: ['/workspace/**'] }",
    "  - { id: allow-copies, decision: allow, tools: [bash], commands: [cp, tee, dd, sort], effects: [write] }",
  ]);

  it.each([
    ["cp a /etc/passwd", "deny"],
    ["cp -t /etc a", "deny"],
    ["echo x | tee -a /etc/hosts", "deny"],
    ["dd if=a of=.env", "deny"],
    ["sort -o/etc/x f", "deny"],
    ["cp a b", "allow"],
    ["cp a $DEST", "ask"],
  ])("%s: %s", async (command, expected) => {
    expect((await decide(command)).decision).toBe(expected);
  });
});
