/**
 * awk programs are read as awk's lexer reads them (src/policy/commands/awk-program.ts). F1: nothing between
 * `system` and its parenthesis (a backslash-newline, a comment, `/**\/`) hides the exec effect, and
 * a program that cannot be read with confidence is opaque. F2: the files `print > F` / `>> F` name
 * meet path rules like any other command's written files; a computed target is opaque.
 */
import { describe, expect, it } from "vitest";
import { readAwkProgram } from "../../../src/policy/commands/awk-program.js";
import { judgeForm } from "../../../src/policy/commands/model.js";
import { evaluate, lexicalContext, loadPolicy } from "../../../src/policy/index.js";
import { bashDecider } from "../../helpers/policy.js";

const SYSTEM_CONTINUED = "awk 'BEGIN{system\\\n(\"id; rm -rf /workspace/a\")}'";

describe("F1: the exec effect survives whatever separates system from its parenthesis", () => {
  it.each([
    ['BEGIN{system\\\n("id")}', "exec"],
    ['BEGIN{system\\ \t\n("id")}', "exec"],
    ['BEGIN{system\t("id")}', "exec"],
    ['BEGIN{system\n("id")}', "exec"],
    ['BEGIN{system # a comment\n("id")}', "exec"],
    ['BEGIN{system/**/("id")}', "exec"],
    ["BEGIN{system}", "exec"],
    ['BEGIN{x = 1 \\\n/ 2; system("id"); y = 1 / 3}', "exec"],
    ['{ if (x) /"/; system("id"); y = "#" }', "exec"],
    ['BEGIN{print "a" |\\\n "sh"}', "exec"],
    ['BEGIN{"id" |\n getline}', "exec"],
    ['BEGIN{f = "system"; @f("id")}', "exec"],
    ['BEGIN{print "x" | & "sh"}', "exec"],
    ['BEGIN{getline l \\\n < ".env"}', "unknown: awk getline reads a file its program names"],
    ['BEGIN{ARGV\\\n[1] = ".env"}', "unknown: awk program changes ARGV / ARGC, the files it reads"],
  ])("%j: %s", (program, effect) => {
    expect(readAwkProgram(program).effect).toBe(effect);
  });

  it.each([
    [
      '/[/]/ { system("id") }',
      "unknown: awk program: a / inside a bracket expression (awks differ on where the regex ends)",
    ],
    [
      '/[]/"]/ { print "x" }',
      "unknown: awk program: a / inside a bracket expression (awks differ on where the regex ends)",
    ],
    ['BEGIN { print "a }', "unknown: awk program: an unterminated string"],
    ["BEGIN { x = /a }", "unknown: awk program: an unterminated regex"],
    ["BEGIN { x = 1 \\ y }", "unknown: awk program: a backslash outside a string that does not end the line"],
    ["BEGIN { x = 1 } # comment \\\n{ print }", "unknown: awk program: a comment that ends in a backslash"],
    ["BEGIN { getline / 2 }", "unknown: awk program: a / after getline (a regex or a division)"],
    ["{ n = length / 2 }", "unknown: awk program: a / after length (a regex or a division)"],
    ['{ x = i++ /"/; system("id"); y = "#" }', "unknown: awk program: a / after ++ (a regex or a division)"],
    ['{ x = i++ /"/; print "id"; y = "#" }', "unknown: awk program: a / after ++ (a regex or a division)"],
    ["{ x = i-- / 2 }", "unknown: awk program: a / after -- (a regex or a division)"],
  ])("%j cannot be read with confidence: %s", (program, effect) => {
    expect(readAwkProgram(program).effect).toBe(effect);
  });

  it.each([
    ["$3 > 100 { print $1 }", null],
    ['# system("id") is only named in a comment\n{ print $1 }', null],
    ['{ print "system(\\"id\\")" }', null],
    ["/system|getline/ { n++ } END { print n }", null],
    ["{ if (x) /a|b/ }", null],
    ['{ print $1 / 2, (a) / 2, b[1] / 2, x / 2, 4 / 2, "4" / 2 }', null],
    ["$1 > 5 || $2 ~ /a|b/ { print ($1 > 2) }", null],
    ["{ x = /[[:alpha:]]x/ ; y = /[]a]/ }", null],
  ])("%j is effect-free: %s", (program, effect) => {
    expect(readAwkProgram(program).effect).toBe(effect);
  });

  const RUNS = "this form runs other programs; no allow rule accepts that effect";
  it.each([
    ["default.yaml", "ask", RUNS],
    ["readonly.yaml", "deny", RUNS],
    ["ci.yaml", "deny", `${RUNS}; would ask, and the policy is non-interactive`],
  ])("%s refuses system\\<newline>( (was allowed): %s", async (file, expected, reason) => {
    const policy = await loadPolicy([new URL(`../../../policies/${file}`, import.meta.url).pathname]);
    const decision = await evaluate(
      policy,
      { tool: "bash", args: { command: SYSTEM_CONTINUED } },
      lexicalContext,
    );
    expect([decision.decision, decision.reason]).toEqual([expected, reason]);
  });
});

describe("gawk's options are read as gawk reads them, so the program is the word gawk runs", () => {
  // A re-test: -I (--trace) was read as taking a value and -L (--lint) as a flag, so the word
  // after them was taken for an option's value and a harmless next word for the program.
  const HIDDEN = 'BEGIN{system("touch /tmp/proof")}';
  it.each([
    [["awk", "-I", HIDDEN, "BEGIN{}"]],
    [["awk", "-Lv", HIDDEN, "BEGIN{}"]],
    [["awk", "-LF", HIDDEN, "BEGIN{}"]],
    [["awk", "-LI", HIDDEN, "BEGIN{}"]],
    [["awk", "--trace", HIDDEN, "BEGIN{}"]],
  ])("%j runs the program that calls system", async (words) => {
    const policy = await loadPolicy([new URL("../../../policies/default.yaml", import.meta.url).pathname]);
    const command = words.map((w) => `'${w}'`).join(" ");
    const decision = await evaluate(policy, { tool: "bash", args: { command } }, lexicalContext);
    expect([decision.decision, decision.reason]).toEqual([
      "ask",
      "this form runs other programs; no allow rule accepts that effect",
    ]);
  });
});

describe("F2: awk's output files meet path rules", () => {
  it.each([
    ['{print "PWNED" > "secrets/keep"; print "NEW" >> "secrets/new"}', ["secrets/keep", "secrets/new"]],
    ['{ print $1 > "out" }', ["out"]],
    ['{ printf("%s\\n", $1) > "out" }', ["out"]],
    ["{ print ($1 > 2) }", []],
    ["$1 > 2 { print $1 }", []],
    ["{ if ($1 > 2) print $1 }", []],
    ['{ print "x",\n\n # a comment\n "y" > "secrets/keep" }', ["secrets/keep"]],
    ['{ print 1 ?\n "a" : "b" > "secrets/keep" }', ["secrets/keep"]],
    ['{ print "x"\n x > "y" }', []],
    ['{ print "F" > ($1 "ts/f") }', [null]],
    ['{ print > ENVIRON["X"] }', [null]],
    ["{ print > $1 }", [null]],
    ['{ print > "a" "b" }', [null]],
    ['{ print > "secr\\145ts/x" }', [null]],
  ])("%j writes %j", (program, writes) => {
    expect(readAwkProgram(program).writes).toEqual(writes);
  });

  it.each([
    [["awk", '{ print > "out" }', "a"], ["out"]],
    [
      ["gawk", "-e", '{ print > "x" }', "-e", '{ print > "y" }', "a"],
      ["x", "y"],
    ],
    [["gawk", "-p", "{ print }", "a"], ["awkprof.out"]],
    [["gawk", "-ofmt.awk", "{ print }", "a"], ["fmt.awk"]],
    [["gawk", "--dump-variables", "{ print }", "a"], ["awkvars.out"]],
    [["awk", "-f", "prog.awk", "a"], []],
  ])("%j writes %j", (words, writes) => {
    const form = judgeForm(words.map((value) => ({ value, expands: false, raw: value })));
    expect(form?.writes.map((w) => w.value)).toEqual(writes);
  });

  it("a network special file is the network effect", () => {
    expect(readAwkProgram('BEGIN { print "x" > "/inet/tcp/0/example.com/80" }').effect).toBe("network");
  });

  const decide = bashDecider([
    "default: ask",
    "rules:",
    "  - { id: deny-secrets, decision: deny, tools: [bash, write, edit], paths: ['/workspace/secrets/**'] }",
    "  - { id: allow-workspace-writes, decision: allow, tools: [write], paths: ['/workspace/**'] }",
    "  - { id: allow-awk-writes, decision: allow, tools: [bash], commands: [awk], effects: [write] }",
  ]);

  it.each([
    ['awk \'{print "PWNED" > "secrets/keep"; print "NEW" >> "secrets/new"}\' a', "deny", "deny-secrets"],
    ['awk \'{print "NEW" >> "secrets/new"}\' a', "deny", "deny-secrets"],
    ['awk \'{print "x" > "/workspace/out/../secrets/k"}\' a', "deny", "deny-secrets"],
    ['awk \'{print "F" > ($1 "ts/f")}\' list', "ask", undefined],
    ["awk '{print > ENVIRON[\"X\"]}' a", "ask", undefined],
    ["awk '{print > $1}' a", "ask", undefined],
    ["awk -v f=secrets/x '{print > f}' a", "deny", "deny-secrets"],
    ["gawk --profile=secrets/prof '{print}' a", "deny", "deny-secrets"],
    ['awk \'{print "ok" > "out/kept"}\' a', "allow", "allow-awk-writes"],
  ])("%s: %s by %s", async (command, decision, rule) => {
    const result = await decide(command);
    expect([result.decision, result.ruleId]).toEqual([decision, rule]);
  });
});
