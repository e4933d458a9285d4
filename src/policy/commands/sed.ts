/**
 * sed in the command model (commands/model.ts): its option grammar and a reader of its scripts
 * that walks them command by command as GNU sed 4.9 parses them (addresses, `!`, `{…}`, `s` with
 * any delimiter and its flags, `y`, the text of `a` / `i` / `c`, labels), so that the text of a
 * regex or a replacement is never taken for a command (`sed -n '/^## Policies/,/^## /p'` prints).
 */
import { type Effect, type Grammar, words } from "./grammar.js";

type ScriptEffect = Effect | `unknown: ${string}` | null;

/** Commands that only print, move or edit the pattern and hold spaces. */
const PLAIN = new Set([..."=dDgGhHlnNpPxzFqQ"]);

/**
 * What a sed script does besides printing: `exec` for the `e` command and `s///e`, `write` for
 * `w` / `W` and `s///w`, unknown for `r` / `R` (they read a file the script names, which path
 * rules do not see) and for anything the reader does not know; null for a script that only
 * prints and edits text. Source: GNU sed manual, "sed scripts" (4.9).
 */
export function sedScriptEffect(script: string): ScriptEffect {
  let i = 0;
  let effect: Effect | null = null;
  const n = script.length;
  const at = (k: number) => script[k] ?? "";
  const toLineEnd = () => {
    while (i < n && at(i) !== "\n") i++;
  };
  /** Skips a delimited part from `i` (just after its opening delimiter `d`); false when unterminated. */
  const delimited = (d: string): boolean => {
    while (i < n && at(i) !== d) i += at(i) === "\\" ? 2 : 1;
    if (i >= n) return false;
    i++;
    return true;
  };
  const address = (): boolean => {
    const ch = at(i);
    if (/[0-9]/.test(ch)) {
      while (/[0-9~]/.test(at(i))) i++;
      return true;
    }
    if (ch === "$") {
      i++;
      return true;
    }
    if (ch === "/" || ch === "\\") {
      const d = ch === "\\" ? at(i + 1) : "/";
      i += ch === "\\" ? 2 : 1;
      if (!delimited(d)) return false;
      while (/[IM]/.test(at(i))) i++;
      return true;
    }
    return true;
  };
  while (i < n) {
    const ch = at(i);
    if (/[\s;}{]/.test(ch)) {
      i++;
      continue;
    }
    if (ch === "#") {
      toLineEnd();
      continue;
    }
    if (!address()) return "unknown: a sed address does not end";
    if (at(i) === ",") {
      i++;
      if (/[+~]/.test(at(i))) i++;
      if (!address()) return "unknown: a sed address does not end";
    }
    while (/[\s!]/.test(at(i))) i++;
    const command = at(i++);
    if (command === "" || command === ";" || command === "}" || command === "{") continue;
    if (PLAIN.has(command)) {
      while (/[0-9]/.test(at(i))) i++;
    } else if (command === ":" || command === "b" || command === "t" || command === "T" || command === "v") {
      while (i < n && at(i) !== "\n" && at(i) !== ";") i++;
    } else if (command === "a" || command === "i" || command === "c") {
      // Text up to the end of the line; a line ending in a backslash continues it.
      while (i < n && at(i) !== "\n") i += at(i) === "\\" ? 2 : 1;
    } else if (command === "w" || command === "W") {
      effect ??= "write";
      toLineEnd();
    } else if (command === "e") {
      effect = "exec";
      toLineEnd();
    } else if (command === "r" || command === "R") {
      return "unknown: sed r / R reads a file its script names";
    } else if (command === "s" || command === "y") {
      const d = at(i++);
      if (d === "" || d === "\n" || d === "\\") return `unknown: sed ${command} has no delimiter`;
      if (!delimited(d) || !delimited(d)) return `unknown: sed ${command} does not end`;
      if (command === "y") continue;
      while (/[gpiImMe0-9w]/.test(at(i))) {
        const flag = at(i++);
        if (flag === "e") effect = "exec";
        if (flag === "w") {
          effect ??= "write";
          toLineEnd();
        }
      }
    } else {
      return `unknown: sed command ${command} is not one the model knows`;
    }
  }
  return effect;
}

/** sed: `-i` writes in place, `-f` reads a script file; the script itself by sedScriptEffect. */
export const SED: Grammar = {
  short: "nrEszuil",
  shortValue: "efl",
  long: words(
    "quiet silent expression= file= in-place? line-length= null-data zero-terminated " +
      "regexp-extended separate sandbox unbuffered posix debug follow-symlinks help version",
  ),
  effects: { i: "write", "in-place": "write", f: "exec", file: "exec" },
  operands: (operands, options, values) => {
    // Scripts given with -e / --expression are option values; without one, the first operand.
    const scripts = values.filter(([o]) => o === "e" || o === "expression").map(([, v]) => v);
    if (!options.includes("e") && !options.includes("expression")) scripts.push(operands[0] ?? "");
    if (scripts.some((v) => v === null)) return "unknown: a sed script is not literal";
    const effects = scripts.map((v) => sedScriptEffect(v as string));
    return (
      effects.find((e) => e?.startsWith("unknown: ")) ??
      effects.find((e) => e === "exec") ??
      effects.find((e) => e !== null) ??
      null
    );
  },
};
