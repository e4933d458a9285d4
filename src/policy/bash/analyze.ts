/**
 * Reduces a bash script to the parts a policy judges: every simple command (in lists, pipelines,
 * subshells, brace groups, functions, loops, conditionals, command and process substitutions,
 * including those inside assignments, arguments, here-docs and redirect targets), the files its
 * redirections write or read, and what cannot be reduced (opaque: eval, a command name from a
 * variable, a non-literal `bash -c`, a parse error). Never a string-prefix check (claude-code#36637:
 * only the first command of `a && b` was checked). Requires loadBashParser() to have resolved.
 */
import type { Node, TreeCursor } from "web-tree-sitter";
import type { ArgWord } from "../command-pattern.js";
import { environmentHazard, judgeForm } from "../commands/model.js";
import {
  type ArgumentPath,
  argumentPaths,
  argvOf,
  FEEDING_WRAPPERS,
  fedOperands,
  gitChdir,
  NO_PATH_OPERANDS,
  withObjectReads,
} from "./arguments.js";
import { joinContinuations } from "./continuations.js";
import {
  backtickScript,
  commandHazard,
  DANGEROUS_VARIABLES,
  HAZARD_NODES,
  syntaxHazard,
} from "./expansions.js";
import {
  applyRedirection,
  type FdContext,
  type FdTable,
  movedFds,
  PIPE_OUT,
  TOOL_STREAMS,
  unknownFds,
  withFd,
} from "./fds.js";
import { withHeredocExpansions } from "./heredoc.js";
import { type Listing, pipelineListing } from "./listings.js";
import { LoopScope } from "./loops.js";
import { withBashTree } from "./parser.js";
import {
  argumentParts,
  type BashPart,
  filePart,
  inDirectory,
  inWorkingDirectories,
  partText,
  renderArgv,
} from "./parts.js";
import {
  COMPOUNDS,
  childFdTables,
  commandContext,
  commandLayout,
  descriptorHazard,
  FD_SCOPES,
  piped,
  pipeRoleOf,
  readRedirect,
  readsInput,
  statementRedirects,
  substitutionPipes,
} from "./redirects.js";
import { unwrap } from "./wrappers.js";

/** How deep `bash -c` / eval scripts are parsed again before the rest counts as opaque. */
const MAX_SCRIPT_DEPTH = 8;

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
  /** The for loops' variables (bash/loops.ts); a listing piped into the command (bash/listings.ts). */
  private readonly loops: LoopScope;
  private pipeListing: Listing | null = null;
  /** FdContext.moved: the commands being judged run in another directory than the script's. */
  private moved: boolean;
  constructor(
    private readonly depth: number,
    private readonly via: string[],
    /** The script and its tree's root (here-docs are checked against the text, bash/heredoc.ts). */
    private readonly source: { script: string; root: Node },
    private readonly fdc: FdContext = { table: TOOL_STREAMS, uncertain: null },
  ) {
    this.fds = fdc.uncertain === null ? fdc.table : unknownFds(fdc.uncertain);
    this.commandFds = this.fds;
    this.loops = new LoopScope(source.root);
    this.moved = fdc.moved === true;
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
   * Judges what bash runs while expanding the here-doc `node`'s body (bash/heredoc.ts): its
   * expansions are parsed together, once, as the arguments of `:` lines, and walked.
   */
  private heredoc(node: Node, level: number): void {
    const { root, script } = this.source;
    const why = withHeredocExpansions(node, root, script, (expansions, tree, nodes) => {
      const inner = new Analyzer(
        this.depth,
        this.via,
        { script: expansions, root: tree },
        { table: withFd(this.fds, 1, PIPE_OUT), uncertain: this.fdc.uncertain, moved: this.moved },
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
    if (why !== null) this.opaque(node.text, why);
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
    const [scope, listing] = [this.commandFds, this.pipeListing];
    [this.commandFds, this.pipeListing] = [substitutionPipes(layout.words, table), null];
    const { assigned, context } = commandContext(node);
    // A command whose stdin is redirected reads no listing piped into it.
    const fedListing = layout.redirects.some((r) => readsInput(r.node)) ? null : listing;
    try {
      this.argv(argvOf(layout.words, this.loops.vars), this.via, fed || context, null, fedListing, assigned);
    } finally {
      this.commandFds = scope;
    }
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
    const standsAlone = !context && via.length === 0 && argv.every((w) => w.value !== null && !w.expands);
    const identity = standsAlone ? JSON.stringify(argv.map((w) => w.value)) : null;
    const origin = { text: renderArgv(argv), via, identity };
    // `git -C DIR …` is git run in DIR, as `env -C DIR git …` (one mechanism: inDirectory).
    const git = gitChdir(argv);
    this.inDirectory(git?.dir, () =>
      this.judge(git?.argv ?? argv, git ? null : argv, origin, operands, listing, assigned),
    );
    // An object name's path (`HEAD:.env`) is from the repository's top, not from DIR.
    if (git)
      this.parts.push(...argumentParts(withObjectReads([], argv), this.commandFds, origin, this.moved));
  }

  /**
   * Judges the command `argv` and what it wraps; `written`: the argv whose git object reads it
   * judges (null: judged by the caller, for a `git -C` taken off); the rest as for argv().
   */
  private judge(
    argv: ArgWord[],
    written: ArgWord[] | null,
    { text, via, identity }: { text: string; via: string[]; identity: string | null },
    operands: ArgumentPath[] | null,
    listing: Listing | null,
    assigned: string[],
  ): void {
    const inner = unwrap(argv);
    const label = (argv[0]?.value ?? "").replace(/^.*\//, "");
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
    const paths = argumentPaths(argv, form?.values, { ...form }); // readsAny, selects
    if (written) paths.splice(0, paths.length, ...withObjectReads(paths, written));
    // Under xargs (find -exec, fd -x) the command gets operands the script does not spell.
    if (operands && !NO_PATH_OPERANDS.has(label)) paths.push(...operands);
    this.parts.push(...argumentParts(paths, this.commandFds, { text, via, identity }, this.moved));
    // The files the model says the form writes are judged like output redirections (`cp a .env`).
    for (const target of form?.writes ?? []) this.file("write", target, text, via, true);
    const sets = inner.assigned.filter((v) => DANGEROUS_VARIABLES.test(v));
    const hazards = [inner.opaque, environmentHazard(argv, assigned), commandHazard(argv)];
    for (const why of hazards) if (why) this.opaque(text, why, via);
    for (const v of sets) this.opaque(text, `${label} sets ${v}, which changes what runs`, via);
    for (const target of inner.writes) this.file("write", target, text, via);
    const fedWith = FEEDING_WRAPPERS.has(label) ? fedOperands(label, argv, listing) : null;
    const shell = label === "eval" || label === "trap" ? label : `${label} -c`;
    this.inDirectory(inner.chdir, () => {
      for (const payload of inner.payloads)
        this.argv(payload, [...via, label], true, fedWith, null, inner.assigned);
      for (const script of inner.scripts) this.script(script, [...via, shell]);
    });
  }

  /**
   * Runs `judge` on what a wrapper runs in the directory `dir` (`env -C DIR`, `git -C DIR`;
   * absent: where the wrapper runs), and judges the parts it adds there (bash/parts.ts inDirectory).
   */
  private inDirectory(dir: ArgWord | undefined, judge: () => void): void {
    const [mark, fds, moved] = [this.parts.length, this.commandFds, this.moved];
    if (dir) [this.commandFds, this.moved] = [movedFds(fds), true];
    judge();
    if (!dir) return;
    [this.commandFds, this.moved] = [fds, moved];
    this.parts.push(
      ...inDirectory(this.parts.splice(mark), dir.value !== null && !dir.expands ? dir.value : null),
    );
  }

  /**
   * Analyses a script the shell parses again (bash -c, eval, trap, nested backticks), whose
   * commands start with the descriptors `fds` (default: the command's that runs it).
   */
  private script(script: string, via: string[], fds: FdTable = this.commandFds): void {
    if (this.depth + 1 > MAX_SCRIPT_DEPTH) this.opaque(script, "scripts nested too deeply", via);
    else for (const part of analyzeBash(script, this.depth + 1, via, fds, this.moved)) this.parts.push(part);
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
    this.parts.push(filePart(kind, target, { text, via }, fds, argument, this.moved));
  }
}

/** The parts of `script` (module doc), in source order; relative targets: in /workspace, or opaque after cd. */
export function analyzeBash(
  script: string,
  depth = 0,
  via: string[] = [],
  fds: FdTable = TOOL_STREAMS,
  moved = false,
): BashPart[] {
  const { text, why } = joinContinuations(script); // the text whose words bash splits
  if (text === null) return [{ kind: "opaque", text: partText(script), why, via }];
  const parts = withBashTree(text, (root) => {
    const uncertain = descriptorHazard(root, text);
    const analyzer = new Analyzer(depth, via, { script: text, root }, { table: fds, uncertain, moved });
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
