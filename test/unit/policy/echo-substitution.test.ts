/**
 * A double-quoted `"$(echo WORD…)"` is the literal text echo prints (bash-words.ts echoedText):
 * `rg -F "$(echo 'x')" README.md` is `rg -F x README.md`. Where echo may not be bash's builtin
 * (a function, an alias, shopt, enable) or its words may be options or escapes, it stays any text.
 */
import { beforeAll, expect, it } from "vitest";
import { evaluate, lexicalContext, loadPolicy, type Policy } from "../../../src/policy/index.js";

const policies: Record<string, Policy> = {};
beforeAll(async () => {
  for (const name of ["default", "readonly"])
    policies[name] = await loadPolicy([new URL(`../../../policies/${name}.yaml`, import.meta.url).pathname]);
});

const decide = async (name: string, command: string) =>
  (await evaluate(policies[name] as Policy, { tool: "bash", args: { command } }, lexicalContext)).decision;

it.each([
  ["rg -F \"$(echo 'x')\" README.md", "allow", "allow"],
  ['grep -n "$(echo a b)" notes.txt', "allow", "allow"],
  // The text is the path it names: as denied as `cat .env`.
  ['cat "$(echo .env)"', "deny", "deny"],
  ['cat "$(echo .git)/config"', "ask", "ask"],
  // echo may be another command, or print something else than its words: any text.
  ['echo() { printf .env; }; cat "$(echo x)"', "deny", "deny"],
  ["shopt -s xpg_echo; rg -F \"$(echo 'a\\c')\" README.md", "ask", "deny"],
  ['rg -F "$(echo -e x)" README.md', "ask", "deny"],
  ['rg -F "$(echo x > f)" README.md', "ask", "deny"],
  ["rg -F $(echo x) README.md", "ask", "deny"],
])("%s decides %s under default, %s under readonly", async (command, onDefault, onReadonly) => {
  expect([await decide("default", command), await decide("readonly", command)]).toEqual([
    onDefault,
    onReadonly,
  ]);
});
