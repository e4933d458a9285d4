// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the strings are shell commands, not templates
/**
 * Issue 13 item 2: opaque means not allowed. Expansions that run code from a variable's value or
 * set variables without an assignment word make their part opaque, and nested backtick
 * substitutions are analysed to any depth. Each example is the or one of its class.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { evaluate, lexicalContext, loadPolicy, type Policy } from "../../../src/policy/index.js";

const shipped = (name: string) => new URL(`../../../policies/${name}.yaml`, import.meta.url).pathname;
let policies: Record<string, Policy>;
beforeAll(async () => {
  policies = {
    default: await loadPolicy([shipped("default")]),
    readonly: await loadPolicy([shipped("readonly")]),
  };
});

async function decide(policy: string, command: string) {
  return evaluate(policies[policy] as Policy, { tool: "bash", args: { command } }, lexicalContext);
}

describe("nested command substitution", () => {
  it.each([
    ["echo `echo \\`rm -rf src\\``", "deny"],
    ["echo `echo \\`echo \\\\\\`rm -rf src\\\\\\`\\``", "deny"],
    ["echo `echo \\`touch pwn\\``", "ask"],
  ])("default: %s is %s", async (command, expected) => {
    expect((await decide("default", command)).decision).toBe(expected);
  });

  it("the nested part is named in the trail, reached through the substitution", async () => {
    const d = await decide("default", "echo `echo \\`rm -rf src\\``");
    expect(d).toMatchObject({ decision: "deny", ruleId: "deny-rm", part: "rm -rf src" });
  });
});

describe("expansions that run code from a variable's value are opaque", () => {
  it.each([
    "x='a[$(touch pwn)]'; echo $((x))",
    "x='a[$(touch pwn)]'; echo $[x]",
    "x='a[$(touch pwn)]'; (( x ))",
    "x='a[$(touch pwn)]'; let y=x",
    "test -v 'a[$(touch pwn)]'",
    "[ -v 'a[$(touch pwn)]' ]",
    "printf -v 'a[$(touch pwn)]' %s 1",
    "x='a[$(touch pwn)]'; echo ${!x}",
    "x='$(touch pwn)'; echo ${x@P}",
    "[[ 1 -eq 'a[$(touch pwn)]' ]]",
    "[[ -v 'a[$(touch pwn)]' ]]",
    "x='a[$(touch pwn)]'; echo ${arr[x]}",
    "x='a[$(touch pwn)]'; echo ${s:x}",
    "unset 'a[$(touch pwn)]'",
    "declare 'a[$(touch pwn)]=1'",
    "declare -n ref=x; echo $ref",
  ])("%s is not auto-allowed under default nor readonly", async (command) => {
    const d = await decide("default", command);
    expect(d.decision, JSON.stringify(d.trail)).not.toBe("allow");
    expect(d.trail.some((e) => e.kind === "opaque")).toBe(true);
    expect((await decide("readonly", command)).decision).toBe("deny");
  });
});

describe("the environment set without an assignment word is opaque", () => {
  it.each([
    "printf -v BASH_ENV %s '$(touch pwn)'; export BASH_ENV; bash -c true",
    "printf -v GIT_EXTERNAL_DIFF %s x; export GIT_EXTERNAL_DIFF; git diff",
    "read PATH < f; ls",
    "read -r GIT_CONFIG_COUNT <<< 1; git status",
    "mapfile -t GIT_CONFIG_KEY_0 < f; git status",
    "export PATH; ls",
    "declare -x GIT_CONFIG_PARAMETERS; git status",
    "echo ${PATH:=.}; ls",
    "echo ${X=1}",
    // A name with a digit (GIT_TRACE2 appends to the file it names; a review found it allowed).
    "GIT_TRACE2=/workspace/.git/config git status",
    "export GIT_TRACE2_EVENT=/workspace/.env; git status",
  ])("%s is not auto-allowed", async (command) => {
    const d = await decide("default", command);
    expect(d.decision, JSON.stringify(d.trail)).not.toBe("allow");
    expect((await decide("readonly", command)).decision).toBe("deny");
  });
});

it("a trap action is analysed as the script it runs", async () => {
  expect(await decide("default", "trap 'rm -rf src' EXIT")).toMatchObject({
    decision: "deny",
    ruleId: "deny-rm",
  });
  expect((await decide("default", "trap 'touch pwn' EXIT")).decision).toBe("ask");
});

describe("clear arithmetic and ordinary variables stay allowed", () => {
  it.each([
    "echo $((1 + 2 * 3))",
    "echo $((0x1f + 10#12))",
    "[[ $# -eq 0 ]] && echo none",
    "echo ${HOME:-/tmp} ${#PWD} ${x:-default}",
    "x=1; echo $x",
    "printf '%s\\n' a b",
    "test -f package.json && echo yes",
    "echo `echo hi`",
  ])("%s is allowed under default", async (command) => {
    const d = await decide("default", command);
    expect(d.decision, JSON.stringify(d.trail)).toBe("allow");
  });
});
