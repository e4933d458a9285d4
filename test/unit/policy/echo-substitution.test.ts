/**
 * A double-quoted `"$(echo WORD…)"` is the literal text echo prints (bash/words.ts echoedText):
 * `rg -F "$(echo 'x')" README.md` is `rg -F x README.md`. Where echo may not be bash's builtin
 * (a function, an alias, shopt, enable) or its words may be options or escapes, it stays any text.
 */
import { expect, it } from "vitest";
import { shippedPolicies } from "../../helpers/policy.js";

const shipped = shippedPolicies("default", "readonly");
const decide = async (name: "default" | "readonly", command: string) =>
  (await shipped.decide(name, command)).decision;

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
