/**
 * Reduces a bash script to the parts a policy judges: every simple command (in lists, pipelines,
 * subshells, brace groups, functions, loops, conditionals, command and process substitutions,
 * including those inside assignments, arguments, here-docs and redirect targets), the files its
 * redirections write or read, and what cannot be reduced (opaque: eval, a command name from a
 * variable, a non-literal `bash -c`, a parse error). Never a string-prefix check (claude-code#36637:
 * only the first command of `a && b` was checked). Requires loadBashParser() to have resolved.
 */
import type { Node, TreeCursor } from "web-tree-sitter";
import {
  ANY_UNKNOWN_PATH,
  argumentPaths,
  changeDirectory,
  FEEDING_WRAPPERS,
  inDirectories,
  NO_PATH_OPERANDS,
  WORKSPACE,
} from "./bash-arguments.js";
import { backtickScript, commandHazard, DANGEROUS_VARIABLES, syntaxHazard } from "./bash-expansions.js";
import {
  applyRedirection,
  type FdTable,
  PIPE_IN,
  PIPE_OUT,
  type Resolved,
  resolveFdPath,
  TOOL_STREAMS,
  unknownFds,
  withFd,
} from "./bash-fds.js";
import { bodyExpansions, expansionNodes, expansionScript, readHeredoc } from "./bash-heredoc.js";
import { withBashTree } from "./bash-parser.js";
import {
  type CommandLayout,
  commandLayout,
  descriptorHazard,
  piped,
  pipelineRoles,
  pipeRoleOf,
  readRedirect,
} from "./bash-redirects.js";
import { globOf, wordOf } from "./bash-words.js";
import { unwrap } from "./bash-wrappers.js";
import type { FormVerdict } from "./command-grammar.js";
import { judgeForm } from "./command-model.js";
import type { ArgWord } from "./command-pattern.js";

/** One thing in a script a policy must judge. `via` lists the wrappers unwrapped to reach it. */
export type BashPart =
  | {
      kind: "command";
      argv: ArgWord[];
      text: string;
      role: "command" | "wrapper";
      via: string[];
      /** What its form does under the command model (command-model.ts); absent for commands it does not describe. */
      form?: FormVerdict;
      /** See `identity` of the argument kind. */
      identity: string | null;
    }
  | { kind: "opaque"; text: string; why: string; via: string[] }
  /**
   * A file a redirection, or (`argument`) a command's own argument, writes or reads. `stream`: the
   * target is one of the command's streams (bash-fds.ts: `/dev/stdout` for a pipe or the tool
   * result, `/dev/null` for the tool's stdin), judged by that name and never resolved in the sandbox.
   */
  | { kind: "write" | "read"; target: string; text: string; via: string[]; argument?: true; stream?: true }
  /** A literal argument that may name a file the command reads (`cat .env`): deny/ask path rules only. */
  | {
      kind: "argument";
      /** The literal path, or when `glob` is set an absolute glob of every path the word may become. */
      target: string;
      /** The word expands (glob, brace, tilde, parameter, substitution): matched by path-overlap.ts. */
      glob?: boolean;
      /** As for `write` / `read`: a stream of the command, never resolved in the sandbox. */
      stream?: true;
      text: string;
      via: string[];
      /**
       * The command's argv values as a JSON array when they alone say what runs, else null: its
       * meaning then depends on the rest of the script (a word that is not literal or that the shell
       * expands, a variable assignment before it, stdin from a pipe, here-doc or input redirection, a
       * wrapper, or a script that changes directory or shell state). "Allow for this session" keys
       * a part on this identity, or on the whole command text when it is null (see evaluate.ts).
       */
      identity: string | null;
    };

/** How deep `bash -c` / eval scripts are parsed again before the rest counts as opaque. */
export const MAX_SCRIPT_DEPTH = 8;

/** How deep in the syntax tree analysis goes before the rest counts as opaque. */
export const MAX_SYNTAX_DEPTH = 200;

/** Syntax nodes syntaxHazard judges (bash-expansions.ts). */
const HAZARD_NODES = new Set([
  "arithmetic_expansion",
  "c_style_for_statement",
  "compound_statement",
  "expansion",
  "test_command",
  "declaration_command",
  "unset_command",
]);

const DIRECTORY_CHANGERS = new Set(["cd", "pushd", "popd"]);
/**
 * Commands after which the same argv may run something else or read other input (directory, stdin,
 * aliases, the command hash, traps, shell options, exported variables): a script holding one has no
 * part whose identity stands alone.
 */
const CONTEXT_CHANGERS = new Set([
  ...DIRECTORY_CHANGERS,
  "exec",
  "alias",
  "hash",
  "enable",
  "trap",
  "shopt",
  "set",
  "export",
  "declare",
  "typeset",
  "readonly",
  "unset",
  "umask",
  "ulimit",
]);
/** Redirections that feed a command's stdin from the script (here-docs, here-strings, `<`). */
const INPUT_REDIRECTS = new Set(["heredoc_redirect", "herestring_redirect"]);

/** Renders argv for display: literal words as themselves, others as written. */
export function renderArgv(argv: readonly ArgWord[]): string {
  return argv
    .map((w) =>
      w.value !== null && !w.expands
        ? /[\s"'\\$`]/.test(w.value)
          ? JSON.stringify(w.value)
          : w.value
        : (w.raw ?? "?"),
    )
    .join(" ");
}

/** Text of an opaque part, kept whole: "allow for this session" approvals are keyed on it. */
function partText(text: string): string {
  return text.trim();
}

/** True for a redirection that feeds stdin from the script: a here-doc, a here-string, `<`, `<&`, `<>`. */
function readsInput(node: Node): boolean {
  if (INPUT_REDIRECTS.has(node.type)) return true;
  if (node.type !== "file_redirect") return false;
  const operator = node.children.find((c) => c && !c.isNamed)?.type ?? "";
  return operator.startsWith("<");
}

/**
 * The descriptors a script starts with (bash-fds.ts), and why its commands' descriptors may differ
 * from what their redirections say (descriptorHazard), or null.
 */
interface FdContext {
  table: FdTable;
  uncertain: string | null;
}

class Analyzer {
  readonly parts: BashPart[] = [];
  /** The descriptors of the scope being walked (a compound statement's redirections, a pipe). */
  private fds: FdTable;
  /** The descriptors of the command being judged (argv, its arguments and nested scripts). */
  private commandFds: FdTable;
  /**
   * The parts of redirections already judged by the command or statement they belong to, by node
   * id: added when the walk reaches the redirection, so parts stay in source order.
   */
  private readonly pending = new Map<number, BashPart[]>();
  constructor(
    private readonly depth: number,
    private readonly via: string[],
    /** The script and its tree's root (here-docs are checked against the text, bash-heredoc.ts). */
    private readonly source: { script: string; root: Node },
    private readonly fdc: FdContext = { table: TOOL_STREAMS, uncertain: null },
  ) {
    this.fds = fdc.uncertain === null ? fdc.table : unknownFds(fdc.uncertain);
    this.commandFds = this.fds;
  }

  /**
   * Visits the node under `cursor` and its descendants, leaving the cursor where it was. A cursor
   * rather than `node.children`: materialising a Node object for every syntax node made analysis
   * several times slower than the parse; only the nodes judged here are materialised.
   * `fed`: the node's stdin comes from the script (a pipe, a here-doc, an input redirection).
   */
  walk(cursor: TreeCursor, fed = false, level = 0): void {
    const type = cursor.nodeType;
    if (level > MAX_SYNTAX_DEPTH) {
      // Each level's words hold the text of all deeper ones: past this, analysis grows with the
      // square of the input (and the stack with its depth). What is not analysed is not allowed.
      this.opaque(cursor.nodeText, `nested more than ${MAX_SYNTAX_DEPTH} syntax levels deep`);
      return;
    }
    if (type === "ERROR" || cursor.nodeIsMissing) {
      const node = cursor.currentNode;
      const at = `${node.startPosition.row + 1}:${node.startPosition.column + 1}`;
      this.opaque(node.text || node.type, `the script does not parse (at ${at})`);
    }
    let feeds = fed;
    if (HAZARD_NODES.has(type)) {
      const node = cursor.currentNode;
      const hazard = syntaxHazard(node);
      if (hazard) this.opaque(node.text, hazard);
    }
    switch (type) {
      case "command_substitution": {
        const script = backtickScript(cursor.nodeText);
        if (script !== null) this.script(script, [...this.via, "`…`"], withFd(this.fds, 1, PIPE_OUT));
        break;
      }
      case "command":
        this.command(cursor.currentNode, fed);
        break;
      case "file_redirect":
      case "herestring_redirect": {
        const node = cursor.currentNode;
        const parts = this.pending.get(node.id);
        if (parts) this.parts.push(...parts);
        else this.redirect(node, this.fds);
        this.pending.delete(node.id);
        break;
      }
      case "variable_assignment": {
        const node = cursor.currentNode;
        const name = node.childForFieldName("name")?.text ?? node.namedChildren[0]?.text ?? "";
        if (DANGEROUS_VARIABLES.test(name))
          this.opaque(node.text, `assigning ${name} changes what commands run`);
        break;
      }
      case "redirected_statement":
        feeds ||= cursor.currentNode.children.some((c) => c !== null && readsInput(c));
        break;
      case "heredoc_redirect":
        this.heredoc(cursor.currentNode, level);
        break;
    }
    const tables = this.childTables(type, cursor);
    if (!cursor.gotoFirstChild()) return;
    const scope = this.fds;
    // In a pipeline every element but the first reads the pipe.
    let namedSeen = false;
    let k = 0;
    do {
      const named = cursor.nodeIsNamed;
      this.fds = tables?.[k++] ?? scope;
      // A here-doc's body is read by heredoc(), never from the parser's tree.
      if (cursor.nodeType !== "heredoc_body")
        this.walk(cursor, type === "pipeline" ? fed || (namedSeen && named) : feeds, level + 1);
      namedSeen ||= named;
    } while (cursor.gotoNextSibling());
    this.fds = scope;
    cursor.gotoParent();
  }

  /**
   * The descriptors of each child of the node under `cursor` where they differ from the scope's
   * (bash-fds.ts): a pipeline's elements get their pipes, a compound statement's body its
   * redirections (judged here), a substitution's commands write a pipe, and a function's body
   * has unknown descriptors (its caller may redirect any). Undefined: every child has the scope's.
   */
  private childTables(type: string, cursor: TreeCursor): (FdTable | undefined)[] | undefined {
    switch (type) {
      case "pipeline": {
        const node = cursor.currentNode;
        const roles = pipelineRoles(node);
        let element = 0;
        return node.children.map((c) => (c?.isNamed ? piped(this.fds, roles[element++]) : undefined));
      }
      case "redirected_statement": {
        const node = cursor.currentNode;
        const body = node.childForFieldName("body");
        if (!body || body.type === "command") return undefined;
        let table = this.fds;
        for (const child of node.namedChildren)
          if (child && child.id !== body.id && child.type.endsWith("_redirect"))
            table = this.redirect(child, table, true);
        return node.children.map((c) => (c?.id === body.id ? table : undefined));
      }
      case "function_definition": {
        const node = cursor.currentNode;
        const body = node.childForFieldName("body");
        const unknown = unknownFds("the function's caller may have redirected");
        return node.children.map((c) => (c?.id === body?.id ? unknown : undefined));
      }
      case "command_substitution":
        return this.childCount(cursor, withFd(this.fds, 1, PIPE_OUT));
      case "process_substitution":
        return this.childCount(
          cursor,
          cursor.nodeText.startsWith(">") ? withFd(this.fds, 0, PIPE_IN) : withFd(this.fds, 1, PIPE_OUT),
        );
      default:
        return undefined;
    }
  }

  /** `table` for each child of the node under `cursor`. */
  private childCount(cursor: TreeCursor, table: FdTable): FdTable[] {
    return cursor.currentNode.children.map(() => table);
  }

  /**
   * Judges what bash runs while expanding the here-doc `node`'s body (bash-heredoc.ts): its
   * expansions are parsed together, once, as the arguments of `:` lines, and walked.
   */
  private heredoc(node: Node, level: number): void {
    const reading = readHeredoc(node, this.source.root, this.source.script);
    if (reading.kind === "opaque") this.opaque(node.text, reading.why);
    if (reading.kind !== "expands") return;
    const scan = bodyExpansions(reading.body);
    if ("opaque" in scan) {
      this.opaque(node.text, scan.opaque);
      return;
    }
    if (scan.words.length === 0) return;
    const script = expansionScript(scan.words);
    withBashTree(script, (root) => {
      const nodes = expansionNodes(root, scan.words);
      if (typeof nodes === "string") {
        this.opaque(node.text, nodes);
        return;
      }
      const inner = new Analyzer(
        this.depth,
        this.via,
        { script, root },
        { table: withFd(this.fds, 1, PIPE_OUT), uncertain: this.fdc.uncertain },
      );
      for (const expansion of nodes) {
        const cursor = expansion.walk();
        try {
          inner.walk(cursor, false, level + 1);
        } finally {
          cursor.delete();
        }
      }
      this.parts.push(...inner.parts);
    });
  }

  private opaque(text: string, why: string, via = this.via): void {
    this.parts.push({ kind: "opaque", text: partText(text), why, via });
  }

  private command(node: Node, fed: boolean): void {
    // In a script whose descriptors may change out of sight, only the command's own pipes and
    // redirections are known.
    let table =
      this.fdc.uncertain === null ? this.fds : piped(unknownFds(this.fdc.uncertain), pipeRoleOf(node));
    const layout = commandLayout(node);
    for (const { node: redirect, fd } of layout.redirects) table = this.redirect(redirect, table, true, fd);
    const scope = this.commandFds;
    this.commandFds = table;
    try {
      this.commandArgv(node, layout, fed);
    } finally {
      this.commandFds = scope;
    }
  }

  private commandArgv(node: Node, layout: CommandLayout, fed: boolean): void {
    const argv: ArgWord[] = [];
    let context = fed;
    for (const child of node.namedChildren) {
      const type = child?.type;
      if (type === "variable_assignment" || type === "file_redirect" || type === "herestring_redirect")
        context ||= type === "variable_assignment" || readsInput(child as Node);
    }
    for (const child of layout.words) {
      const wordNode = child.type === "command_name" ? child.namedChildren[0] : child;
      if (!wordNode) continue;
      const word: ArgWord = { ...wordOf(wordNode), raw: wordNode.text };
      if (word.value === null || word.expands) word.glob = globOf(wordNode);
      argv.push(word);
    }
    this.argv(argv, this.via, context);
  }

  /**
   * Judges one argv: the command itself, then whatever it wraps. `context`: something outside the
   * argv (an assignment prefix, stdin from the script) changes what it does.
   */
  private argv(argv: ArgWord[], via: string[], context: boolean, unknownOperands = false): void {
    const name = argv[0];
    if (!name) return;
    if (name.value === null || name.expands) {
      const why = name.value === null ? "is not literal" : "may be expanded by the shell";
      this.opaque(renderArgv(argv), `the command name ${why}`, via);
      return;
    }
    const inner = unwrap(argv);
    const text = renderArgv(argv);
    const label = name.value.slice(name.value.lastIndexOf("/") + 1);
    const standsAlone = !context && via.length === 0 && argv.every((w) => w.value !== null && !w.expands);
    const identity = standsAlone ? JSON.stringify(argv.map((w) => w.value)) : null;
    const form = judgeForm(argv) ?? undefined;
    if (form && inner.role === "wrapper" && (form.unknown || form.effects.length > 0))
      this.opaque(text, form.unknown ?? `${label} runs a command its options name`, via);
    this.parts.push({
      kind: "command",
      argv,
      text,
      role: inner.role,
      via,
      identity,
      ...(form ? { form } : {}),
    });
    const paths = argumentPaths(argv);
    // Under xargs (or find -exec / fd -x) the command gets operands the script does not spell:
    // any path.
    if (unknownOperands && !NO_PATH_OPERANDS.has(label)) paths.push(ANY_UNKNOWN_PATH);
    for (const { target, glob } of paths) {
      const resolved: Resolved = glob ? { kind: "path", target } : resolveFdPath(this.commandFds, target);
      if (resolved.kind === "opaque") this.opaque(text, resolved.why, via);
      else
        this.parts.push({
          kind: "argument",
          target: resolved.target,
          text,
          via,
          identity,
          ...(glob ? { glob } : {}),
          ...(resolved.kind === "stream" ? { stream: true as const } : {}),
        });
    }
    // The files the model says the form writes are judged like output redirections (`cp a .env`).
    for (const target of form?.writes ?? []) this.file("write", target, text, via, true);
    if (inner.opaque) this.opaque(text, inner.opaque, via);
    const hazard = commandHazard(argv);
    if (hazard) this.opaque(text, hazard, via);
    for (const variable of inner.assigned) {
      if (DANGEROUS_VARIABLES.test(variable))
        this.opaque(text, `${label} sets ${variable}, which changes what runs`, via);
    }
    for (const target of inner.writes) this.file("write", target, text, via);
    for (const payload of inner.payloads)
      this.argv(payload, [...via, label], true, FEEDING_WRAPPERS.has(label));
    for (const script of inner.scripts)
      this.script(script, [...via, label === "eval" || label === "trap" ? label : `${label} -c`]);
  }

  /**
   * Analyses a script the shell parses again (bash -c, eval, trap, nested backticks), whose
   * commands start with the descriptors `fds` (default: the command's that runs it).
   */
  private script(script: string, via: string[], fds: FdTable = this.commandFds): void {
    if (this.depth + 1 > MAX_SCRIPT_DEPTH) this.opaque(script, "scripts nested too deeply", via);
    else for (const part of analyzeBash(script, this.depth + 1, via, fds)) this.parts.push(part);
  }

  /**
   * Judges the redirection `node` under the descriptors `table` and returns those it leaves;
   * `later`: its parts wait in `pending` until the walk reaches it.
   */
  private redirect(node: Node, table: FdTable, later = false, fd?: number): FdTable {
    const read = readRedirect(node, fd);
    if (!read) return table;
    const mark = this.parts.length;
    if (read.word && read.access)
      this.file(read.access, read.word, partText(node.text), this.via, undefined, table);
    if (later) this.pending.set(node.id, this.parts.splice(mark));
    return applyRedirection(table, read.redirection).table;
  }

  /**
   * Judges a file the command writes or reads: `target` as the descriptors `fds` make it (a stream
   * of the command, the file a descriptor holds, or the path itself).
   */
  private file(
    kind: "write" | "read",
    target: ArgWord,
    text: string,
    via: string[],
    argument?: true,
    fds: FdTable = this.commandFds,
  ): void {
    if (target.value === null || target.expands) {
      const why = target.value === null ? "is not literal" : "may be expanded by the shell";
      this.opaque(text, `the ${kind} target ${why}`, via);
      return;
    }
    const resolved = resolveFdPath(fds, target.value);
    if (resolved.kind === "opaque") {
      this.opaque(text, resolved.why, via);
      return;
    }
    this.parts.push({
      kind,
      target: resolved.target,
      text,
      via,
      ...(argument ? { argument } : {}),
      ...(resolved.kind === "stream" ? { stream: true as const } : {}),
    });
  }
}

/**
 * The parts of `script` (see module doc), in source order. A relative redirect target is judged
 * against /workspace, unless the script changes directory, when it becomes opaque.
 */
export function analyzeBash(
  script: string,
  depth = 0,
  via: string[] = [],
  fds: FdTable = TOOL_STREAMS,
): BashPart[] {
  const parts = withBashTree(script, (root) => {
    const uncertain = descriptorHazard(root, script);
    const analyzer = new Analyzer(depth, via, { script, root }, { table: fds, uncertain });
    const cursor = root.walk();
    try {
      analyzer.walk(cursor);
    } finally {
      cursor.delete();
    }
    return analyzer.parts;
  });
  const names = new Set<string>();
  for (const p of parts) {
    const name = p.kind === "command" ? p.argv[0]?.value : undefined;
    if (name) names.add(name.slice(name.lastIndexOf("/") + 1));
  }
  const changesDir = [...DIRECTORY_CHANGERS].some((n) => names.has(n));
  const changesContext = changesDir || [...CONTEXT_CHANGERS].some((n) => names.has(n));
  if (!changesContext) return parts;
  let dirs: string[] | null = [WORKSPACE];
  return parts.flatMap((p): BashPart[] => {
    const name = p.kind === "command" ? (p.argv[0]?.value ?? "") : "";
    if (DIRECTORY_CHANGERS.has(name) && p.kind === "command") dirs = changeDirectory(p.argv, dirs);
    if (changesDir && p.kind === "argument") return inDirectories(p, dirs);
    if (changesDir && (p.kind === "write" || p.kind === "read") && !p.target.startsWith("/"))
      return [
        {
          kind: "opaque",
          text: p.text,
          why: `relative ${p.kind} target after a change of directory`,
          via: p.via,
        },
      ];
    return [p.kind === "command" || p.kind === "argument" ? { ...p, identity: null } : p];
  });
}
