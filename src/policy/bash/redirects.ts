/**
 * tree-sitter-bash redirection nodes read into what bash does with them (bash/fds.ts): which
 * descriptor, open / dup / close / feed, the target word and whether it is judged as a write or a
 * read. Also where a command sits in a pipeline, and what in a script may change descriptors out
 * of the analysis' sight (`exec`, `source`, `{var}` redirections).
 */
import type { Node, TreeCursor } from "web-tree-sitter";
import type { ArgWord } from "../command-pattern.js";
import { type FdTable, PIPE_IN, PIPE_OUT, type Redirection, unknownFds, withFd } from "./fds.js";
import { wordOf } from "./words.js";

/** Operators that open their target for writing. */
const OUTPUT_OPERATORS = new Set([">", ">>", ">|", "&>", "&>>", "<>", ">&", "&>|"]);

/** One redirection node, read. */
export interface ReadRedirect {
  redirection: Redirection;
  /** The target word of an `open` (as wordOf reads it), else null. */
  word: ArgWord | null;
  /** How an `open` uses its target, else null. */
  access: "write" | "read" | null;
}

function literal(word: ArgWord): string | null {
  return word.value !== null && !word.expands ? word.value : null;
}

/**
 * Reads a `file_redirect`, `heredoc_redirect` or `herestring_redirect` node; null for one that
 * changes no descriptor bash keeps (`<&word` that is not a number fails in bash).
 */
export function readRedirect(node: Node, descriptorWord?: number): ReadRedirect | null {
  const descriptor = node.children.find((c) => c?.type === "file_descriptor");
  const given = descriptor ? Number(descriptor.text) : (descriptorWord ?? null);
  if (node.type === "heredoc_redirect" || node.type === "herestring_redirect")
    return { redirection: { op: "feed", fd: given ?? 0 }, word: null, access: null };
  if (node.type !== "file_redirect") return null;
  const operator = node.children.find((c) => c && !c.isNamed)?.type ?? "";
  const input = operator.startsWith("<");
  const fd = given ?? (input ? 0 : 1);
  if (operator === ">&-" || operator === "<&-")
    return { redirection: { op: "close", fd }, word: null, access: null };
  const destination = node.childForFieldName("destination") ?? node.namedChildren.at(-1);
  if (!destination || destination.type === "file_descriptor") return null;
  // `< <(cmd)`, `> >(cmd)`: a pipe bash made for cmd, whose commands are walked like any others.
  if (destination.type === "process_substitution")
    return { redirection: { op: "feed", fd, ...(input ? {} : { out: true }) }, word: null, access: null };
  const word: ArgWord = { ...wordOf(destination), raw: destination.text };
  const value = literal(word);
  if (operator === ">&" || operator === "<&") {
    const dup = /^(\d+)(-?)$/.exec(value ?? "");
    if (dup)
      return {
        redirection: { op: "dup", fd, from: Number(dup[1]), move: dup[2] === "-" },
        word: null,
        access: null,
      };
    if (value === "-") return { redirection: { op: "close", fd }, word: null, access: null };
    if (operator === "<&") return null;
    // `>&word` that is not a number writes the file on fds 1 and 2, as `&>word` does.
    return {
      redirection: { op: "open", fd: given ?? 1, both: given === null, target: value },
      word,
      access: "write",
    };
  }
  const both = operator === "&>" || operator === "&>>";
  const access = OUTPUT_OPERATORS.has(operator) ? "write" : operator === "<" ? "read" : null;
  if (access === null) return null;
  return { redirection: { op: "open", fd: both ? 1 : fd, both, target: value }, word, access };
}

/** A command's words and redirections as bash reads them (commandLayout). */
export interface CommandLayout {
  /** The command name and argument nodes, in order. */
  words: Node[];
  /** Its redirections in bash's order (source order); `fd` when a word before it gives the descriptor. */
  redirects: { node: Node; fd?: number }[];
}

/**
 * The words and redirections of `command`, with the statement's redirections when it is the body
 * of one, undoing two misreadings of tree-sitter-bash: a word after a redirection's target
 * (`cat </dev/null .env`) is read as a second target, though bash passes it to the command; and
 * `0` before `<` or `>` (`0>&3`) is read as a word, though bash reads it as the descriptor.
 */
export function commandLayout(command: Node): CommandLayout {
  const nodes = command.namedChildren.filter((c): c is Node => c !== null);
  nodes.push(...statementRedirects(command));
  // tree-sitter-bash reads the redirections after `<<E` on its line into the here-doc's node.
  for (const node of [...nodes])
    if (node.type === "heredoc_redirect")
      nodes.push(...node.namedChildren.filter((c): c is Node => c?.type === "file_redirect"));
  nodes.sort((a, b) => a.startIndex - b.startIndex);
  const words = nodes.filter((c) => !c.type.endsWith("_redirect") && c.type !== "variable_assignment");
  const redirects: CommandLayout["redirects"] = [];
  for (const node of nodes) {
    if (!node.type.endsWith("_redirect")) continue;
    const before = words.findIndex((w) => w.type === "number" && w.endIndex === node.startIndex);
    const hasDescriptor = node.children.some((c) => c?.type === "file_descriptor");
    if (before !== -1 && !hasDescriptor && node.type === "file_redirect") {
      redirects.push({ node, fd: Number(words[before]?.text) });
      words.splice(before, 1);
    } else redirects.push({ node });
    if (node.type === "file_redirect")
      words.push(
        ...node
          .childrenForFieldName("destination")
          .slice(1)
          .filter((c): c is Node => c !== null),
      );
  }
  words.sort((a, b) => a.startIndex - b.startIndex);
  return { words, redirects };
}

/** Commands bash redirects as a whole (a redirected statement's body other than a simple command). */
export const COMPOUNDS = new Set([
  "compound_statement",
  "subshell",
  "if_statement",
  "while_statement",
  "for_statement",
  "c_style_for_statement",
  "case_statement",
  "test_command",
  "declaration_command",
  "unset_command",
]);

/** Nodes tree-sitter-bash may hang a redirected statement's redirections on, though bash does not. */
const SEQUENCES = new Set(["pipeline", "list", "negated_command"]);

/**
 * The redirections of the redirected statements around `node` that bash applies to `node` alone:
 * tree-sitter-bash reads `a | b >x` and `a && b >x` as the whole pipeline or list redirected, where
 * bash redirects only `b`, the last element; so a statement's redirections belong to the last
 * element of the pipeline, list or `!` command it wraps (through nested ones).
 */
export function statementRedirects(node: Node): Node[] {
  const found: Node[] = [];
  let cur = node;
  for (;;) {
    const parent = cur.parent;
    if (!parent) break;
    if (parent.type === "redirected_statement" && parent.childForFieldName("body")?.id === cur.id) {
      for (const c of parent.namedChildren)
        if (c && c.id !== cur.id && c.type.endsWith("_redirect")) found.push(c);
    } else if (!(SEQUENCES.has(parent.type) && parent.lastNamedChild?.id === cur.id)) break;
    cur = parent;
  }
  return found;
}

/** Which of a pipeline element's descriptors are pipes. */
export interface PipeRole {
  in: boolean;
  out: boolean;
  /** `|&`: stderr goes down the pipe too. */
  err: boolean;
}

/** Roles of a pipeline's elements, one per named child in order. */
function pipelineRoles(pipeline: Node): PipeRole[] {
  const roles: PipeRole[] = [];
  for (const child of pipeline.children) {
    if (!child) continue;
    const last = roles.at(-1);
    if (child.isNamed) roles.push({ in: roles.length > 0, out: false, err: false });
    else if (last && (child.type === "|" || child.type === "|&")) {
      last.out = true;
      last.err = child.type === "|&";
    }
  }
  return roles;
}

/** `table` with the pipes of `role` (bash connects them before the element's own redirections). */
export function piped(table: FdTable, role: PipeRole | undefined): FdTable {
  if (!role) return table;
  let t = table;
  if (role.in) t = withFd(t, 0, PIPE_IN);
  if (role.out) t = withFd(t, 1, PIPE_OUT);
  if (role.err) t = withFd(t, 2, PIPE_OUT);
  return t;
}

/** The pipe role of `command` when it (or the redirected statement around it) is a pipeline element. */
export function pipeRoleOf(command: Node): PipeRole | undefined {
  let element = command;
  const parent = command.parent;
  if (parent?.type === "redirected_statement" && parent.childForFieldName("body")?.id === command.id)
    element = parent;
  const pipeline = element.parent;
  if (pipeline?.type !== "pipeline") return undefined;
  const index = pipeline.namedChildren.findIndex((c) => c?.id === element.id);
  return pipelineRoles(pipeline)[index];
}

/** Builtins that run code in this shell, where an `exec` in their text changes its descriptors. */
const SAME_SHELL_CODE = new Set(["eval", "trap", "alias", "command", "builtin"]);

/**
 * Why the descriptors of `root`'s commands may differ from what their redirections say, or null:
 * an `exec` (which changes the shell's own descriptors for all that follows, in any order a loop
 * or a function call runs it), `source` / `.` (a file's code), `exec` in the text of eval / trap /
 * alias / command / builtin, or a `{var}>` redirection (a descriptor number bash picks).
 */
export function descriptorHazard(root: Node, script: string): string | null {
  if (/\{[A-Za-z_][A-Za-z0-9_]*\}[<>]/.test(script))
    return "a {var} redirection in the script may have opened (bash picks its number)";
  const cursor: TreeCursor = root.walk();
  try {
    for (;;) {
      if (cursor.nodeType === "command") {
        const node = cursor.currentNode;
        const nameNode = node.childForFieldName("name")?.namedChildren[0];
        const name = nameNode ? wordOf(nameNode).value : null;
        if (name === "exec") return "an exec in the script may have redirected";
        if (name === "source" || name === ".") return "a file the script sources may have redirected";
        if (name !== null && SAME_SHELL_CODE.has(name) && /(^|[^\w-])exec(?![\w-])/.test(node.text))
          return `an exec run by ${name} may have redirected`;
      }
      if (cursor.gotoFirstChild()) continue;
      while (!cursor.gotoNextSibling()) if (!cursor.gotoParent()) return null;
    }
  } finally {
    cursor.delete();
  }
}

/** Redirections that feed a command's stdin from the script (here-docs, here-strings, `<`). */
const INPUT_REDIRECTS = new Set(["heredoc_redirect", "herestring_redirect"]);

/** True for a redirection that feeds stdin from the script: a here-doc, a here-string, `<`, `<&`, `<>`. */
export function readsInput(node: Node): boolean {
  if (INPUT_REDIRECTS.has(node.type)) return true;
  if (node.type !== "file_redirect") return false;
  const operator = node.children.find((c) => c && !c.isNamed)?.type ?? "";
  return operator.startsWith("<");
}

/** Node types whose children may have other descriptors than the node (childFdTables). */
export const FD_SCOPES = new Set([
  "pipeline",
  "function_definition",
  "command_substitution",
  "process_substitution",
]);

/**
 * The descriptors of each child of `node` (one of FD_SCOPES) where they differ from `fds`, the
 * scope's: a pipeline's elements get their pipes, a substitution's commands
 * write a pipe (`>(…)`: read one), and a function's body has unknown descriptors (its caller may
 * redirect any). Undefined entries, or undefined: the child has the scope's.
 */
export function childFdTables(node: Node, fds: FdTable): (FdTable | undefined)[] | undefined {
  switch (node.type) {
    case "pipeline": {
      const roles = pipelineRoles(node);
      let element = 0;
      return node.children.map((c) => (c?.isNamed ? piped(fds, roles[element++]) : undefined));
    }
    case "function_definition": {
      const body = node.childForFieldName("body");
      const unknown = unknownFds("the function's caller may have redirected");
      return node.children.map((c) => (c?.id === body?.id ? unknown : undefined));
    }
    case "command_substitution":
      return node.children.map(() => withFd(fds, 1, PIPE_OUT));
    case "process_substitution": {
      const table = node.text.startsWith(">") ? withFd(fds, 0, PIPE_IN) : withFd(fds, 1, PIPE_OUT);
      return node.children.map(() => table);
    }
    default:
      return undefined;
  }
}

/**
 * The variables `command`'s assignment prefix sets, and `context`: an assignment or an input
 * redirection changes what its argv alone would do.
 */
export function commandContext(command: Node): { assigned: string[]; context: boolean } {
  const assigned: string[] = [];
  let context = false;
  for (const child of command.namedChildren) {
    const type = child?.type;
    if (type === "variable_assignment" || type === "file_redirect" || type === "herestring_redirect")
      context ||= type === "variable_assignment" || readsInput(child as Node);
    if (type === "variable_assignment") assigned.push(child?.childForFieldName("name")?.text ?? "");
  }
  return { assigned, context };
}

/**
 * `table` with the pipe of each process substitution among a command's `words` open where bash
 * passes it (`<(…)`: the command reads it, `>(…)`: writes it): bash names it /dev/fd/63 on Linux
 * (bash/words.ts PROCESS_SUBSTITUTION_PATH), so that argument is judged as the pipe, not a file.
 */
export function substitutionPipes(words: readonly Node[], table: FdTable): FdTable {
  for (const word of words) {
    const parts = word.type === "concatenation" ? word.namedChildren : [word];
    const sub = parts.find((p) => p?.type === "process_substitution");
    if (sub) return withFd(table, 63, sub.text.startsWith(">") ? PIPE_OUT : PIPE_IN);
  }
  return table;
}
