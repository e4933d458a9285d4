// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the strings are shell commands, not templates
/**
 * Issue 13 item 1: the command model. Option spellings are read as each tool's parser reads them
 * (clusters, attached values, `--opt=value`, getopt_long abbreviations, subcommands); an allow rule
 * naming a command grants only forms free of effects it does not name; an unknown option or a word
 * that may become one is not auto-allowed.
 */
import { describe, expect, it } from "vitest";
import type { ArgWord } from "../../../src/policy/command-pattern.js";
import { judgeForm, sedScriptEffect } from "../../../src/policy/commands/model.js";
import { bashDecider } from "../../helpers/policy.js";

const argv = (...words: string[]): ArgWord[] => words.map((value) => ({ value, expands: false, raw: value }));
const form = (...words: string[]) => judgeForm(argv(...words));

describe("judgeForm reads options like the tool does", () => {
  it.each([
    [["fd", "-t", "f", "-xrm"], ["exec"]],
    [["fd", "--exec=rm"], ["exec"]],
    [["fd", "-e", "ts"], []],
    [["rg", "--pre=sh", "x"], ["exec"]],
    [["rg", "-n", "--no-heading", "foo", "src"], []],
    [["env", "--s=touch pwn"], ["exec"]],
    [["env", "-i", "A=1", "ls", "-S"], []],
    [["sed", "-i", "s/a/b/", "f"], ["write"]],
    [["sed", "--in-place=.bak", "s/a/b/", "f"], ["write"]],
    [["sed", "1e touch pwn", "f"], ["exec"]],
    [["sed", "s/a/b/e", "f"], ["exec"]],
    [["sed", "s/a/b/w out", "f"], ["write"]],
    [["sed", "-n", "/foo/,/bar/p", "f"], []],
    [["sed", "-n", "-e", "1p", "-e", "1e touch pwn", "f"], ["exec"]],
    [["sed", "--expression=s/a/b/w out", "f"], ["write"]],
    [["sed", "-ne", "1,3p", "f"], []],
    [["find", ".", "-name", "*.ts", "-fprint", "x"], ["write"]],
    [["find", ".", "-delete"], ["write"]],
    [["find", ".", "-type", "f", "-exec", "cat", "{}", "+"], ["exec"]],
    [["git", "branch", "--del", "main"], ["write"]],
    [["git", "branch", "--cop", "a", "b"], ["write"]],
    [["git", "branch", "-f", "x"], ["write"]],
    [["git", "branch", "new-branch"], ["write"]],
    [["git", "branch", "-a", "--contains", "HEAD"], []],
    [["git", "diff", "--output-indicator-new=+"], []],
    [["git", "diff", "--out=x"], ["write"]],
    [["git", "-c", "core.pager=sh", "log"], ["exec"]],
    [["sort", "--numeric-sort", "--reverse", "f"], []],
    [["sort", "-no", "out", "f"], ["write"]],
    [["sort", "--out=x", "f"], ["write"]],
    [["make", "--eval=x:;rm -rf src", "x"], ["exec"]],
    [["make", "-j4", "test"], []],
    [["go", "test", "-exec", "sh", "./..."], ["exec"]],
    [["go", "test", "-run", "TestX", "./..."], []],
    [["cargo", "--config", "x", "build"], ["exec"]],
    [["tar", "-xf", "a.tar"], ["write"]],
    [
      ["tar", "--to-command=sh", "-xf", "a.tar"],
      ["exec", "write"],
    ],
    [["npm", "test", "--script-shell=sh"], ["exec"]],
  ])("%j: %j", (words, effects) => {
    const verdict = form(...words);
    expect(verdict?.unknown).toBeUndefined();
    expect(verdict?.effects.sort()).toEqual([...effects].sort());
  });

  it.each([
    [["fd", "--frobnicate"], "--frobnicate is not an option the model knows"],
    [["sort", "-Q", "f"], "-Q is not an option the model knows"],
    [["git", "branch", "--co"], "--co is not an option the model knows"],
    [["find", ".", "-frobnicate"], "find -frobnicate is not a primary the model knows"],
    [["git", "frobnicate"], "the subcommand frobnicate is not one the model knows"],
  ])("%j is unknown: %s", (words, why) => {
    expect(form(...words)?.unknown).toBe(why);
  });

  it("a word that is not literal before the operands may be an option", () => {
    const words: ArgWord[] = [...argv("fd"), { value: null, expands: false, raw: "${X:--x}" }, ...argv("rm")];
    expect(judgeForm(words)?.unknown).toBe("the word ${X:--x} is not literal and may be an option");
  });

  it("sed scripts: e and w commands, s///e and s///w; text of a/i/c and regexes do not count", () => {
    expect(sedScriptEffect("$e")).toBe("exec");
    expect(sedScriptEffect("/e/w out")).toBe("write");
    expect(sedScriptEffect("/ewW/d")).toBeNull();
    expect(sedScriptEffect("1i hello world")).toBeNull();
    expect(sedScriptEffect("s/w/e/g")).toBeNull();
  });
});

describe("an allow rule grants only the forms whose effects it names", () => {
  const decide = bashDecider([
    "default: ask",
    "rules:",
    "  - { id: allow-tools, decision: allow, tools: [bash], commands: [sed, find] }",
    "  - { id: allow-sed-edits, decision: allow, tools: [bash], commands: [sed], effects: [write] }",
  ]);

  it.each([
    ["sed -n 1,5p f", "allow"],
    ["sed -i s/a/b/ f", "allow"],
    ["sed '1e touch pwn' f", "ask"],
    ["find . -name '*.ts'", "allow"],
    ["find . -fprint out", "ask"],
    ["find . -delete", "ask"],
  ])("%s: %s", async (command, expected) => {
    expect((await decide(command)).decision).toBe(expected);
  });

  it("names why a form was not granted", async () => {
    expect((await decide("find . -fprint out")).reason).toBe(
      "this form writes files; no allow rule accepts that effect",
    );
  });
});
