/**
 * The values a `for` loop's variable takes (issue 37 item 11): `for f in src/*.ts; do wc -l "$f";
 * done` runs `wc -l` on what `src/*.ts` expands to, so inside the loop's body `"$f"` is judged as
 * that glob instead of as any text. Only for a variable nothing else in the script may set: an
 * assignment, `read`, `mapfile`, `getopts`, `printf -v`, `declare`, `local`, `export`, `unset` or
 * `let` naming it (or naming a variable that is not literal) leaves it any text. Arithmetic and
 * `${x:=…}` that could set it are opaque already (bash/expansions.ts).
 */
import type { Node, TreeCursor } from "web-tree-sitter";
import { ANY_TEXT } from "../command-pattern.js";
import { globEscape, globOf, wordOf } from "./words.js";

/** Builtins that may store into a variable their arguments name. */
const SETTERS = new Set([
  "read",
  "mapfile",
  "readarray",
  "getopts",
  "printf",
  "declare",
  "typeset",
  "local",
  "export",
  "readonly",
  "unset",
  "let",
]);

/** A loop word's values as one glob: literal text escaped, a glob kept, anything else any text. */
function valueGlob(node: Node): string {
  const word = wordOf(node);
  if (word.value !== null && !word.expands) return globEscape(word.value);
  const glob = globOf(node);
  // A bare comma would split the alternatives loopValues joins with braces.
  return word.value !== null && !glob.includes(",") ? glob : ANY_TEXT;
}

/**
 * Each `for` variable of the script that nothing else may set → the glob of its values
 * (`{a,b}` for several words). A loop without `in` (the positional parameters) gives any text.
 */
function loopValues(root: Node): Map<string, string> {
  const values = new Map<string, string[]>();
  const blocked = new Set<string>();
  let unknownSetter = false;
  const visit = (cursor: TreeCursor): void => {
    const type = cursor.nodeType;
    if (type === "for_statement") {
      const node = cursor.currentNode;
      const name = node.childForFieldName("variable")?.text;
      if (name) {
        const words = node.childrenForFieldName("value").filter((c) => c !== null);
        const list = values.get(name) ?? [];
        list.push(...(words.length ? words.map(valueGlob) : [ANY_TEXT]));
        values.set(name, list);
      }
    } else if (type === "variable_assignment") {
      const node = cursor.currentNode;
      blocked.add(node.childForFieldName("name")?.text ?? node.namedChildren[0]?.text ?? "");
    } else if (type === "command") {
      const node = cursor.currentNode;
      const name = node.childForFieldName("name")?.text ?? "";
      let args = node.childrenForFieldName("argument").map((a) => (a ? wordOf(a).value : null));
      // printf reads options only before its format: only `printf -v NAME` stores.
      if (name === "printf") args = args[0] === "-v" || args[0] === null ? args.slice(0, 2) : [];
      if (SETTERS.has(name))
        for (const value of args) {
          if (value === null) unknownSetter = true;
          else blocked.add(value.replace(/^([A-Za-z_][A-Za-z0-9_]*).*$/s, "$1"));
        }
    }
  };
  // Iterative: a deeply nested script must not exhaust the stack.
  const cursor = root.walk();
  try {
    let depth = 0;
    for (;;) {
      visit(cursor);
      if (cursor.gotoFirstChild()) {
        depth++;
        continue;
      }
      let moved = false;
      while (depth > 0 && !moved) {
        moved = cursor.gotoNextSibling();
        if (!moved) {
          cursor.gotoParent();
          depth--;
        }
      }
      if (!moved) break;
    }
  } finally {
    cursor.delete();
  }
  const out = new Map<string, string>();
  if (unknownSetter) return out;
  for (const [name, globs] of values) {
    if (blocked.has(name)) continue;
    const unique = [...new Set(globs)];
    out.set(
      name,
      unique.includes(ANY_TEXT)
        ? ANY_TEXT
        : unique.length === 1
          ? (unique[0] as string)
          : `{${unique.join(",")}}`,
    );
  }
  return out;
}

/**
 * The loop variables of one script (loopValues) and, while a for loop's body is walked, the value
 * glob its variable stands for there (`vars`, for bash/words.ts globOf).
 */
export class LoopScope {
  private readonly loops: Map<string, string>;
  /** The variables of the loops being walked, as globs of their values. */
  readonly vars = new Map<string, string>();
  constructor(root: Node) {
    this.loops = loopValues(root);
  }

  /** Makes `node`'s variable (a for_statement) stand for its values; returns the undo, or null. */
  enter(node: Node): (() => void) | null {
    const name = node.childForFieldName("variable")?.text;
    const values = name ? this.loops.get(name) : undefined;
    if (!name || values === undefined) return null;
    const before = this.vars.get(name);
    this.vars.set(name, values);
    return () => (before === undefined ? this.vars.delete(name) : this.vars.set(name, before));
  }
}
