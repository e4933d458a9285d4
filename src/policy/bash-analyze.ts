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
  type ArgumentPath,
  argumentPaths,
  argvOf,
  FEEDING_WRAPPERS,
  fedOperands,
  gitInDirectory,
  NO_PATH_OPERANDS,
  withObjectReads,
} from "./bash-arguments.js";
import {
  backtickScript,
  commandHazard,
  DANGEROUS_VARIABLES,
  HAZARD_NODES,
  syntaxHazard,
} from "./bash-expansions.js";
import {
  applyRedirection,
  type FdContext,
  type FdTable,
  PIPE_OUT,
  TOOL_STREAMS,
  unknownFds,
  withFd,
} from "./bash-fds.js";
import { bodyExpansions, expansionNodes, expansionScript, readHeredoc } from "./bash-heredoc.js";
import { type Listing, pipelineListing } from "./bash-listings.js";
import { LoopScope } from "./bash-loops.js";
import { withBashTree } from "./bash-parser.js";
import {
  argumentParts,
  type BashPart,
  filePart,
  inWorkingDirectories,
  partText,
  renderArgv,
} from "./bash-parts.js";
import {
  COMPOUNDS,
  type CommandLayout,
  childFdTables,
  commandLayout,
  descriptorHazard,
  FD_SCOPES,
  piped,
  pipeRoleOf,
  readRedirect,
  readsInput,
  statementRedirects,
  substitutionPipes,
} from "./bash-redirects.js";
import { unwrap } from "./bash-wrappers.js";
import { environmentHazard, judgeForm } from "./command-model.js";
import type { ArgWord } from "./command-pattern.js";

/** How deep `bash -c` / eval scripts are parsed again before the rest counts as opaque. */
export const MAX_SCRIPT_DEPTH = 8;

/** How deep in the syntax tree analysis goes before the rest counts as opaque. */
export const MAX_SYNTAX_DEPTH = 200;

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
  /** The for loops' variables (bash-loops.ts); a listing piped into the command (bash-listings.ts). */
  private readonly loops: LoopScope;
  private pipeListing: Listing | null = null;
  constructor(
    private readonly depth: number,
    private readonly via: string[],
    /** The script and its tree's root (here-docs are checked against the text, bash-heredoc.ts). */
    private readonly source: { script: string; root: Node },
    private readonly fdc: FdContext = { table: TOOL_STREAMS, uncertain: null },
  ) {
    this.fds = fdc.uncertain === null ? fdc.table : unknownFds(fdc.uncertain);
    this.commandFds = this.fds;
    this.loops = new LoopScope(source.root);
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
    const outer = this.fds;
    // A compound command's redirections (a simple command's are judged in command()).
    if (COMPOUNDS.has(type)) {
      const redirects = statementRedirects(cursor.currentNode);
      for (const redirect of redirects) this.fds = this.redirect(redirect, this.fds, true);
      if (redirects.length > 0 && this.fdc.uncertain !== null) this.fds = unknownFds(this.fdc.uncertain);
    }
    const tables = FD_SCOPES.has(type) ? childFdTables(cursor.currentNode, this.fds) : undefined;
    const loop = type === "for_statement" ? this.loops.enter(cursor.currentNode) : null;
    if (!cursor.gotoFirstChild()) {
      this.fds = outer;
      loop?.();
      return;
    }
    const scope = this.fds;
    // In a pipeline every element but the first reads the pipe.
    let namedSeen = false;
    let k = 0;
    const elements: Node[] = [];
    do {
      const named = cursor.nodeIsNamed;
      this.fds = tables?.[k++] ?? scope;
      if (type === "pipeline" && named) {
        this.pipeListing = elements.length > 0 ? pipelineListing(elements) : null;
        elements.push(cursor.currentNode);
      }
      // A here-doc's body is read by heredoc(), never from the parser's tree.
      if (cursor.nodeType !== "heredoc_body")
        this.walk(cursor, type === "pipeline" ? fed || (namedSeen && named) : feeds, level + 1);
      this.pipeListing = null;
      namedSeen ||= named;
    } while (cursor.gotoNextSibling());
    this.fds = outer;
    cursor.gotoParent();
    loop?.();
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
    table = substitutionPipes(layout.words, table);
    const scope = this.commandFds;
    this.commandFds = table;
    try {
      this.commandArgv(node, layout, fed);
    } finally {
      this.commandFds = scope;
    }
  }

  private commandArgv(node: Node, layout: CommandLayout, fed: boolean): void {
    let listing = this.pipeListing;
    this.pipeListing = null;
    const assigned: string[] = [];
    let context = fed;
    for (const child of node.namedChildren) {
      const type = child?.type;
      if (type === "variable_assignment" || type === "file_redirect" || type === "herestring_redirect")
        context ||= type === "variable_assignment" || readsInput(child as Node);
      if (type === "variable_assignment") assigned.push(child?.childForFieldName("name")?.text ?? "");
    }
    // A command whose stdin is redirected reads no listing piped into it.
    if (layout.redirects.some((r) => readsInput(r.node))) listing = null;
    this.argv(argvOf(layout.words, this.loops.vars), this.via, context, null, listing, assigned);
  }

  /**
   * Judges one argv: the command itself, then whatever it wraps. `context`: something outside the
   * argv (an assignment prefix, stdin from the script) changes what it does. `assigned`: the
   * variables its prefix (or an `env` wrapper) sets.
   */
  private argv(
    argv: ArgWord[],
    via: string[],
    context: boolean,
    operands: ArgumentPath[] | null = null,
    listing: Listing | null = null,
    assigned: string[] = [],
  ): void {
    const name = argv[0];
    if (!name) return;
    if (name.value === null || name.expands) {
      const why = name.value === null ? "is not literal" : "may be expanded by the shell";
      this.opaque(renderArgv(argv), `the command name ${why}`, via);
      return;
    }
    const text = renderArgv(argv);
    const standsAlone = !context && via.length === 0 && argv.every((w) => w.value !== null && !w.expands);
    const identity = standsAlone ? JSON.stringify(argv.map((w) => w.value)) : null;
    const written = argv;
    const moved = gitInDirectory(argv);
    argv = moved.argv;
    const inner = unwrap(argv);
    const label = name.value.slice(name.value.lastIndexOf("/") + 1);
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
    const paths = withObjectReads(moved.paths(argumentPaths(argv, form?.values)), written);
    // Under xargs (find -exec, fd -x) the command gets operands the script does not spell.
    if (operands && !NO_PATH_OPERANDS.has(label)) paths.push(...operands);
    this.parts.push(...argumentParts(paths, this.commandFds, { text, via, identity }));
    // The files the model says the form writes are judged like output redirections (`cp a .env`).
    for (const target of form?.writes ?? []) this.file("write", target, text, via, true);
    if (inner.opaque) this.opaque(text, inner.opaque, via);
    const taken = environmentHazard(argv, assigned);
    if (taken) this.opaque(text, taken, via);
    const hazard = commandHazard(argv);
    if (hazard) this.opaque(text, hazard, via);
    for (const variable of inner.assigned) {
      if (DANGEROUS_VARIABLES.test(variable))
        this.opaque(text, `${label} sets ${variable}, which changes what runs`, via);
    }
    for (const target of inner.writes) this.file("write", target, text, via);
    for (const payload of inner.payloads)
      this.argv(
        payload,
        [...via, label],
        true,
        FEEDING_WRAPPERS.has(label) ? fedOperands(label, argv, listing) : null,
        null,
        inner.assigned,
      );
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

  /** Judges a file the command writes or reads, as the descriptors `fds` make it (filePart). */
  private file(
    kind: "write" | "read",
    target: ArgWord,
    text: string,
    via: string[],
    argument?: true,
    fds: FdTable = this.commandFds,
  ): void {
    this.parts.push(filePart(kind, target, { text, via }, fds, argument));
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
  return inWorkingDirectories(parts);
}
