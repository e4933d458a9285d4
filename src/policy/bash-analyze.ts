/**
 * Reduces a bash script to the parts a policy judges: every simple command (in lists, pipelines,
 * subshells, brace groups, functions, loops, conditionals, command and process substitutions,
 * including those inside assignments, arguments, here-docs and redirect targets), the files its
 * redirections write or read, and what cannot be reduced (opaque: eval, a command name from a
 * variable, a non-literal `bash -c`, a parse error). Never a string-prefix check (claude-code#36637:
 * only the first command of `a && b` was checked). Requires loadBashParser() to have resolved.
 */
import type { Node } from "web-tree-sitter";
import { withBashTree } from "./bash-parser.js";
import { wordOf } from "./bash-words.js";
import { unwrap } from "./bash-wrappers.js";
import type { ArgWord } from "./command-pattern.js";

/** One thing in a script a policy must judge. `via` lists the wrappers unwrapped to reach it. */
export type BashPart =
  | { kind: "command"; argv: ArgWord[]; text: string; role: "command" | "wrapper"; via: string[] }
  | { kind: "opaque"; text: string; why: string; via: string[] }
  | { kind: "write" | "read"; target: string; text: string; via: string[] }
  /** A literal argument that may name a file the command reads (`cat .env`): deny/ask path rules only. */
  | { kind: "argument"; target: string; text: string; via: string[] };

/** How deep `bash -c` / eval scripts are parsed again before the rest counts as opaque. */
export const MAX_SCRIPT_DEPTH = 8;

/**
 * Variables whose assignment changes which program runs or what it loads (`PATH=. git status`
 * runs ./git); assigning them anywhere makes the script opaque.
 */
const DANGEROUS_VARIABLES =
  /^(PATH|LD_[A-Z_]+|BASH_ENV|ENV|IFS|PROMPT_COMMAND|SHELLOPTS|BASHOPTS|GIT_[A-Z_]*|PAGER|EDITOR|VISUAL|NODE_OPTIONS|PYTHONSTARTUP|PYTHONPATH|PERL5OPT|RUBYOPT|npm_config_[A-Za-z_]+)$/;

const OUTPUT_OPERATORS = new Set([">", ">>", ">|", "&>", "&>>", "<>", ">&", "&>|"]);
const DIRECTORY_CHANGERS = new Set(["cd", "pushd", "popd"]);

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

/** Home of the sandbox user (images/sandbox/Dockerfile), where the shell expands `~`. */
const SANDBOX_HOME = "/home/sandbox";

/**
 * The literal arguments of a command that may name files: plain words, and the value of
 * `--option=value`. Option flags are skipped. Used so `cat .env` meets a deny rule on `.env`
 * like `read .env` does (a path rule cannot see what a recursive `grep -r` will open).
 */
function argumentPaths(argv: readonly ArgWord[]): string[] {
  const paths: string[] = [];
  for (const word of argv.slice(1)) {
    if (word.value === null) continue;
    if (word.expands) {
      // `~/x` expands to the sandbox user's home; any other expansion cannot be known here.
      const rest = /^~(\/[^*?[{]*)$/.exec(word.value)?.[1];
      if (rest !== undefined) paths.push(`${SANDBOX_HOME}${rest}`);
      continue;
    }
    const option = word.value.startsWith("-");
    if (option && !word.value.includes("=")) continue;
    const value = option ? word.value.slice(word.value.indexOf("=") + 1) : word.value;
    if (value !== "" && !value.includes("\0")) paths.push(value);
  }
  return paths;
}

/** Text of an opaque part, kept whole: "allow for this session" approvals are keyed on it. */
function partText(text: string): string {
  return text.trim();
}

class Analyzer {
  readonly parts: BashPart[] = [];
  constructor(
    private readonly depth: number,
    private readonly via: string[],
  ) {}

  walk(node: Node): void {
    if (node.isError || node.isMissing) {
      const at = `${node.startPosition.row + 1}:${node.startPosition.column + 1}`;
      this.opaque(node.text || node.type, `the script does not parse (at ${at})`);
    }
    switch (node.type) {
      case "command":
        this.command(node);
        break;
      case "file_redirect":
        this.redirect(node);
        break;
      case "variable_assignment": {
        const name = node.childForFieldName("name")?.text ?? node.namedChildren[0]?.text ?? "";
        if (DANGEROUS_VARIABLES.test(name))
          this.opaque(node.text, `assigning ${name} changes what commands run`);
        break;
      }
    }
    for (const child of node.children) if (child) this.walk(child);
  }

  private opaque(text: string, why: string, via = this.via): void {
    this.parts.push({ kind: "opaque", text: partText(text), why, via });
  }

  private command(node: Node): void {
    const argv: ArgWord[] = [];
    for (const child of node.namedChildren) {
      if (!child) continue;
      const type = child.type;
      if (type === "variable_assignment" || type === "file_redirect" || type === "herestring_redirect")
        continue;
      const wordNode = type === "command_name" ? child.namedChildren[0] : child;
      if (!wordNode) continue;
      argv.push({ ...wordOf(wordNode), raw: wordNode.text });
    }
    this.argv(argv, this.via);
  }

  /** Judges one argv: the command itself, then whatever it wraps. */
  private argv(argv: ArgWord[], via: string[]): void {
    const name = argv[0];
    if (!name) return;
    if (name.value === null || name.expands) {
      const why = name.value === null ? "is not literal" : "may be expanded by the shell";
      this.opaque(renderArgv(argv), `the command name ${why}`, via);
      return;
    }
    const inner = unwrap(argv);
    const text = renderArgv(argv);
    this.parts.push({ kind: "command", argv, text, role: inner.role, via });
    for (const target of argumentPaths(argv)) this.parts.push({ kind: "argument", target, text, via });
    if (inner.opaque) this.opaque(text, inner.opaque, via);
    const label = name.value.slice(name.value.lastIndexOf("/") + 1);
    for (const variable of inner.assigned) {
      if (DANGEROUS_VARIABLES.test(variable))
        this.opaque(text, `${label} sets ${variable}, which changes what runs`, via);
    }
    for (const target of inner.writes) this.file("write", target, text, via);
    for (const payload of inner.payloads) this.argv(payload, [...via, label]);
    for (const script of inner.scripts) {
      const nested = [...via, label === "eval" ? "eval" : `${label} -c`];
      if (this.depth + 1 > MAX_SCRIPT_DEPTH) this.opaque(script, "scripts nested too deeply", nested);
      else this.parts.push(...analyzeBash(script, this.depth + 1, nested));
    }
  }

  private redirect(node: Node): void {
    const operator = node.children.find((c) => c && !c.isNamed)?.type ?? "";
    const destination = node.childForFieldName("destination") ?? node.namedChildren.at(-1);
    if (!destination || destination.type === "file_descriptor") return;
    const target: ArgWord = { ...wordOf(destination), raw: destination.text };
    const isFdDup = (operator === ">&" || operator === "<&") && /^(\d+|-)$/.test(target.value ?? "");
    if (isFdDup || operator === "<&") return;
    const kind = OUTPUT_OPERATORS.has(operator) ? "write" : operator === "<" ? "read" : null;
    if (kind) this.file(kind, target, partText(node.text), this.via);
  }

  private file(kind: "write" | "read", target: ArgWord, text: string, via: string[]): void {
    if (target.value === null || target.expands) {
      const why = target.value === null ? "is not literal" : "may be expanded by the shell";
      this.opaque(text, `the ${kind} target ${why}`, via);
      return;
    }
    this.parts.push({ kind, target: target.value, text, via });
  }
}

/**
 * The parts of `script` (see module doc), in source order. A relative redirect target is judged
 * against /workspace, unless the script changes directory, when it becomes opaque.
 */
export function analyzeBash(script: string, depth = 0, via: string[] = []): BashPart[] {
  const analyzer = new Analyzer(depth, via);
  withBashTree(script, (root) => analyzer.walk(root));
  const parts = analyzer.parts;
  const changesDir = parts.some(
    (p) =>
      p.kind === "command" && p.argv[0]?.value !== null && DIRECTORY_CHANGERS.has(p.argv[0]?.value ?? ""),
  );
  if (!changesDir) return parts;
  return parts.map((p) =>
    (p.kind === "write" || p.kind === "read") && !p.target.startsWith("/")
      ? {
          kind: "opaque",
          text: p.text,
          why: `relative ${p.kind} target after a change of directory`,
          via: p.via,
        }
      : p,
  );
}
