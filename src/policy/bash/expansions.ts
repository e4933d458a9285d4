/**
 * Expansions and builtins that run code taken from a variable's value, or set variables without an
 * assignment word (issue 13, item 2). Bash evaluates array subscripts inside arithmetic, so a value
 * like `a[$(touch pwn)]` runs `touch pwn` when it reaches `$((x))`, `((x))`, `let`, `[[ x -eq 1 ]]`,
 * `${a[x]}`, `${s:x}`, `test -v` or `printf -v`; `${!x}` and `${x@P}` expand a value again; and
 * `printf -v`, `read`, `declare`, `export` or `${X:=…}` change variables (BASH_ENV, PATH, GIT_*)
 * that later commands act on. Each such place makes its part opaque: never auto-allowed.
 * Arithmetic over numbers and special parameters only (`$((1+2))`, `[[ $# -eq 0 ]]`) stays clear.
 */
import type { Node } from "web-tree-sitter";
import type { ArgWord } from "../command-pattern.js";
import { DANGEROUS_VARIABLES } from "./dangerous-variables.js";

// Kept here for the analyser's imports; the public barrel takes it from bash/dangerous-variables.ts.
export { DANGEROUS_VARIABLES };

const ARITHMETIC_TEST_OPERATORS = new Set(["-eq", "-ne", "-lt", "-le", "-gt", "-ge"]);

/** True when arithmetic text refers to a variable (its value would be evaluated as arithmetic). */
function arithmeticUsesVariables(text: string): boolean {
  const numbers = text.replace(/\b\d+#[0-9A-Za-z@_]+/g, "").replace(/\b0[xX][0-9a-fA-F]+/g, "");
  return /[A-Za-z_]/.test(numbers);
}

/** Why a `${…}` expansion is opaque, or null. */
function expansionHazard(text: string): string | null {
  // tree-sitter keeps a backtick substitution inside `${x:-…}` (in double quotes) as plain text:
  // bash runs it, so what is not parsed here is not allowed.
  if (text.includes("`")) return `a backtick substitution inside \${…} is not analysed`;
  if (text.startsWith("${!") && !/^\$\{![A-Za-z_]\w*(\*|@|\[[@*]\])\}$/.test(text))
    return `indirect expansion \${!…} expands a variable's value again`;
  if (/@P\}$/.test(text)) return `prompt expansion \${…@P} runs command substitutions in a value`;
  if (/^\$\{#?[A-Za-z_]\w*(\[[^\]]*\])?:?=/.test(text)) return `an assignment inside \${…} sets a variable`;
  const subscript = /^\$\{#?[A-Za-z_]\w*\[([^\]]*)\]/.exec(text)?.[1];
  if (subscript !== undefined && subscript !== "@" && subscript !== "*" && arithmeticUsesVariables(subscript))
    return "an array subscript is arithmetic on a variable's value";
  const offset = /^\$\{[A-Za-z_]\w*(?:\[[^\]]*\])?:(?![-=?+])([^}]*)\}$/.exec(text)?.[1];
  if (offset !== undefined && arithmeticUsesVariables(offset))
    return "a substring offset is arithmetic on a variable's value";
  return null;
}

/** Why a `[[ … ]]` test is opaque, or null: arithmetic operands, `-v` with a subscript. */
function testHazard(node: Node): string | null {
  for (const expr of node.descendantsOfType(["binary_expression", "unary_expression"])) {
    if (!expr) continue;
    const operator = expr.childForFieldName("operator")?.text ?? "";
    const operands = expr.namedChildren.filter((c) => c && c.type !== "test_operator");
    if (ARITHMETIC_TEST_OPERATORS.has(operator) && operands.some((c) => c && arithmeticUsesVariables(c.text)))
      return `[[ … ${operator} … ]] evaluates its operands as arithmetic on variables`;
    if (operator === "-v" && operands.some((c) => c?.text.includes("[")))
      return "-v with an array subscript evaluates it as arithmetic";
  }
  return null;
}

/** Why a declare / typeset / local / export / readonly is opaque, or null. */
function declarationHazard(node: Node): string | null {
  for (const child of node.namedChildren) {
    if (!child) continue;
    if (child.type === "word") {
      if (/^[-+][A-Za-z]*n/.test(child.text))
        return "a name reference (-n) makes one variable stand for another";
      continue;
    }
    const name =
      child.type === "variable_name"
        ? child
        : child.type === "variable_assignment"
          ? child.childForFieldName("name")
          : null;
    if (name?.type !== "variable_name")
      return `${node.children[0]?.text ?? "declare"} of a name that is not literal or has a subscript`;
    if (DANGEROUS_VARIABLES.test(name.text))
      return `${node.children[0]?.text ?? "declare"} ${name.text} changes what commands run`;
  }
  return null;
}

/** Syntax nodes syntaxHazard judges (bash/analyze.ts hands it only these). */
export const HAZARD_NODES = new Set([
  "arithmetic_expansion",
  "c_style_for_statement",
  "compound_statement",
  "expansion",
  "test_command",
  "declaration_command",
  "unset_command",
]);

/**
 * Why the syntax node `node` (an expansion, arithmetic, a test, a declaration, an unset) is
 * opaque, or null when it is clear. Only the node itself is judged; its children are walked apart.
 */
export function syntaxHazard(node: Node): string | null {
  switch (node.type) {
    case "arithmetic_expansion":
    case "c_style_for_statement":
      return arithmeticUsesVariables(node.text.replace(/^for\b/, "").replace(/\bdo\b[\s\S]*$/, ""))
        ? "arithmetic on a variable's value runs code its value holds (a[$(…)])"
        : null;
    case "compound_statement":
      return node.text.startsWith("((") && arithmeticUsesVariables(node.text)
        ? "arithmetic on a variable's value runs code its value holds (a[$(…)])"
        : null;
    case "expansion":
      return expansionHazard(node.text);
    case "test_command":
      return testHazard(node);
    case "declaration_command":
      return declarationHazard(node);
    case "unset_command":
      return node.text.includes("[") ? "unset with an array subscript evaluates it as arithmetic" : null;
    default:
      return null;
  }
}

/** Builtins that store into variables named by their arguments. */
const ASSIGNING_BUILTINS = new Set(["read", "mapfile", "readarray", "getopts"]);

/**
 * Whether printf's arguments may hold `-v NAME`: bash's printf reads options only before its
 * format (the first word that is not an option, or the word after `--`), so a word that is not
 * literal after a literal format is an argument, never `-v`.
 */
function printfStores(args: readonly ArgWord[]): boolean {
  for (const w of args) {
    if (w.value === null || w.expands) return true;
    if (w.value === "--" || !w.value.startsWith("-")) return false;
    if (/^-[^-]*v/.test(w.value)) return true;
  }
  return false;
}

/**
 * Why a simple command is opaque for what it does to variables, or null: `printf -v`, `let`,
 * `test -v NAME[…]`, and read / mapfile / getopts into a dangerous, subscripted or non-literal name.
 */
export function commandHazard(argv: readonly ArgWord[]): string | null {
  const name = argv[0]?.value ?? "";
  const args = argv.slice(1);
  if (name === "printf" && printfStores(args))
    return "printf -v stores into a variable named by its argument";
  if (name === "let")
    return args.some((w) => w.value === null || arithmeticUsesVariables(w.value))
      ? "let evaluates arithmetic on variables' values"
      : null;
  if (
    (name === "test" || name === "[") &&
    args.some((w, k) => w.value === "-v" && (args[k + 1]?.value ?? "[").includes("["))
  )
    return "test -v with an array subscript evaluates it as arithmetic";
  if (ASSIGNING_BUILTINS.has(name)) {
    for (const w of args) {
      if (w.value === null) return `${name} stores into a variable whose name is not literal`;
      if (w.value.includes("[") || DANGEROUS_VARIABLES.test(w.value))
        return `${name} stores into ${w.value}, which changes what runs`;
    }
  }
  return null;
}

/**
 * The script a backtick substitution runs when its body holds escaped backticks (nested
 * substitution: ``echo `echo \`rm x\`` `` runs `echo \`rm x\``, which runs `rm x`). Bash removes
 * the backslash before `` ` ``, `\` and `$` and parses the body again; tree-sitter keeps the inner
 * one as plain text. Null when the body has no escape to resolve.
 */
export function backtickScript(text: string): string | null {
  if (!text.startsWith("`") || !text.endsWith("`") || text.length < 2) return null;
  const body = text.slice(1, -1);
  if (!/\\[`$\\]/.test(body)) return null;
  return body.replace(/\\([`$\\])/g, "$1");
}
