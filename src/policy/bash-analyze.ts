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
  CONTEXT_CHANGERS,
  changeDirectory,
  DIRECTORY_CHANGERS,
  FEEDING_WRAPPERS,
  fedOperands,
  foundPaths,
  gitInDirectory,
  inDirectories,
  NO_PATH_OPERANDS,
  WORKSPACE,
} from "./bash-arguments.js";
import { backtickScript, commandHazard, DANGEROUS_VARIABLES, syntaxHazard } from "./bash-expansions.js";
import { bodyExpansions, expansionNodes, expansionScript, readHeredoc } from "./bash-heredoc.js";
import { type Listing, pipelineListing, substitutionListing } from "./bash-listings.js";
import { loopValues } from "./bash-loops.js";
import { withBashTree } from "./bash-parser.js";
import { globOf, readsInput, renderArgv, wordOf } from "./bash-words.js";
import { unwrap } from "./bash-wrappers.js";
import type { FormVerdict } from "./command-grammar.js";
import { judgeForm } from "./command-model.js";
import type { ArgWord, Found } from "./command-pattern.js";

export { renderArgv };

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
  /** A file a redirection, or (`argument`) a command's own argument, writes or reads. */
  | { kind: "write" | "read"; target: string; text: string; via: string[]; argument?: true }
  /** A literal argument that may name a file the command reads (`cat .env`): deny/ask path rules only. */
  | {
      kind: "argument";
      /** The literal path, or when `glob` is set an absolute glob of every path the word may become. */
      target: string;
      /** The word expands (glob, brace, tilde, parameter, substitution): matched by path-overlap.ts. */
      glob?: boolean;
      /** A path a listing printed (bash-listings.ts), with that listing's dot rule (match.ts). */
      found?: Found;
      /** The word as the script writes it, shown instead of the glob. */
      word?: string;
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

const OUTPUT_OPERATORS = new Set([">", ">>", ">|", "&>", "&>>", "<>", ">&", "&>|"]);
/** Text of an opaque part, kept whole: "allow for this session" approvals are keyed on it. */
function partText(text: string): string {
  return text.trim();
}

class Analyzer {
  readonly parts: BashPart[] = [];
  /** Loop variables nothing else sets (bash-loops.ts); those whose body is walked; a listing piped in. */
  private readonly loops: Map<string, string>;
  private readonly inLoop = new Map<string, string>();
  private pipeListing: Listing | null = null;
  constructor(
    private readonly depth: number,
    private readonly via: string[],
    /** The script and its tree's root (here-docs are checked against the text, bash-heredoc.ts). */
    private readonly source: { script: string; root: Node },
  ) {
    this.loops = loopValues(source.root);
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
        if (script !== null) this.script(script, [...this.via, "`…`"]);
        break;
      }
      case "command":
        this.command(cursor.currentNode, fed);
        break;
      case "file_redirect":
        this.redirect(cursor.currentNode);
        break;
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
    const loop = type === "for_statement" ? this.enterLoop(cursor.currentNode) : null;
    if (!cursor.gotoFirstChild()) return;
    // In a pipeline every element but the first reads the pipe.
    let namedSeen = false;
    const elements: Node[] = [];
    do {
      const named = cursor.nodeIsNamed;
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
    cursor.gotoParent();
    loop?.();
  }

  /** Makes a for loop's variable stand for its values while its body is walked; returns the undo. */
  private enterLoop(node: Node): (() => void) | null {
    const name = node.childForFieldName("variable")?.text;
    const values = name ? this.loops.get(name) : undefined;
    if (!name || values === undefined) return null;
    const before = this.inLoop.get(name);
    this.inLoop.set(name, values);
    return () => (before === undefined ? this.inLoop.delete(name) : this.inLoop.set(name, before));
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
      const inner = new Analyzer(this.depth, this.via, { script, root });
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
    let listing = this.pipeListing;
    this.pipeListing = null;
    const argv: ArgWord[] = [];
    let context = fed;
    for (const child of node.namedChildren) {
      if (!child) continue;
      const type = child.type;
      if (type === "variable_assignment" || type === "file_redirect" || type === "herestring_redirect") {
        context ||= type === "variable_assignment" || readsInput(child);
        if (readsInput(child)) listing = null;
        continue;
      }
      const wordNode = type === "command_name" ? child.namedChildren[0] : child;
      if (!wordNode) continue;
      const word: ArgWord = { ...wordOf(wordNode), raw: wordNode.text };
      if (word.value === null || word.expands) {
        word.glob = globOf(wordNode, this.inLoop);
        const printed = substitutionListing(wordNode);
        if (printed) word.found = foundPaths(printed, wordNode.text);
      }
      argv.push(word);
    }
    this.argv(argv, this.via, context, null, listing);
  }

  /**
   * Judges one argv: the command itself, then whatever it wraps. `context`: something outside the
   * argv (an assignment prefix, stdin from the script) changes what it does.
   */
  private argv(
    argv: ArgWord[],
    via: string[],
    context: boolean,
    operands: ArgumentPath[] | null = null,
    listing: Listing | null = null,
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
    const paths = moved.paths(argumentPaths(argv));
    // Under xargs (find -exec, fd -x) the command gets operands the script does not spell.
    if (operands && !NO_PATH_OPERANDS.has(label)) paths.push(...operands);
    for (const { target, glob, found, word } of paths)
      this.parts.push({
        kind: "argument",
        target,
        text,
        via,
        identity,
        ...(glob ? { glob } : {}),
        ...(found ? { found } : {}),
        ...(word !== undefined ? { word } : {}),
      });
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
      this.argv(
        payload,
        [...via, label],
        true,
        FEEDING_WRAPPERS.has(label) ? fedOperands(label, argv, listing) : null,
      );
    for (const script of inner.scripts)
      this.script(script, [...via, label === "eval" || label === "trap" ? label : `${label} -c`]);
  }

  /** Analyses a script the shell parses again (bash -c, eval, trap, nested backticks). */
  private script(script: string, via: string[]): void {
    if (this.depth + 1 > MAX_SCRIPT_DEPTH) this.opaque(script, "scripts nested too deeply", via);
    else for (const part of analyzeBash(script, this.depth + 1, via)) this.parts.push(part);
  }

  private redirect(node: Node): void {
    const operator = node.children.find((c) => c && !c.isNamed)?.type ?? "";
    const destination = node.childForFieldName("destination") ?? node.namedChildren.at(-1);
    // `< <(cmd)` reads the pipe bash made for cmd, whose commands are walked like any others.
    if (!destination || destination.type === "file_descriptor" || destination.type === "process_substitution")
      return;
    const target: ArgWord = { ...wordOf(destination), raw: destination.text };
    const isFdDup = (operator === ">&" || operator === "<&") && /^(\d+|-)$/.test(target.value ?? "");
    if (isFdDup || operator === "<&") return;
    const kind = OUTPUT_OPERATORS.has(operator) ? "write" : operator === "<" ? "read" : null;
    if (kind) this.file(kind, target, partText(node.text), this.via);
  }

  private file(kind: "write" | "read", target: ArgWord, text: string, via: string[], argument?: true): void {
    if (target.value === null || target.expands) {
      const why = target.value === null ? "is not literal" : "may be expanded by the shell";
      this.opaque(text, `the ${kind} target ${why}`, via);
      return;
    }
    this.parts.push({ kind, target: target.value, text, via, ...(argument ? { argument } : {}) });
  }
}

/**
 * The parts of `script` (see module doc), in source order. A relative redirect target is judged
 * against /workspace, unless the script changes directory, when it becomes opaque.
 */
export function analyzeBash(script: string, depth = 0, via: string[] = []): BashPart[] {
  const parts = withBashTree(script, (root) => {
    const analyzer = new Analyzer(depth, via, { script, root });
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
