/**
 * What a policy judges in a call of the process tool (src/tools/process.ts):
 * - `start` is a bash command: its script is analysed exactly as the bash tool's (every subject,
 *   every rule of bash applies; a rule may name the process tool too), run in `cwd` when one is
 *   given (judged as the script after `cd -- 'cwd'`, cwd resolved as the tool resolves it);
 * - `input` is a command when the program reading it interprets it (a shell, python, node, psql,
 *   less's `!`, vim's `:!`, xargs…) and warden does not tell which programs do: input is opaque
 *   (at least ask) unless a rule's `input` names the program of that process, as the controller
 *   recorded its command (EvaluateContext.processRecord); a process the session does not know
 *   (yet) is opaque too;
 * - `output`, `list`, `wait`, `kill` run nothing: judged by name (rules' `actions`).
 */
import { normalizeToolPath } from "../tools/index.js";
import { analyzeBash } from "./bash/analyze.js";
import type { Subject } from "./match.js";
import type { EvaluateContext, Policy } from "./types.js";

/** A subject and what a session approval of it covers (as evaluate.ts's). */
export interface ScopedSubject {
  subject: Subject;
  scope: string;
}

/** evaluate.ts's analysis of one bash command into scoped subjects. */
export type BashSubjects = (
  policy: Policy,
  command: unknown,
  ctx: EvaluateContext,
) => Promise<ScopedSubject[]>;

/**
 * A program name a rule can name: a bare name, looked up in PATH. A path (`./cat`, `/tmp/cat`) is
 * whatever file stands there, maybe one the model wrote, so it matches no rule (attack-procs F1;
 * bash rules judge `./make` apart from `make` the same way).
 */
function bareName(name: string): string | null {
  return name.includes("/") ? null : name;
}

/** A shell word quoted so that bash reads it back exactly. */
function shellQuote(word: string): string {
  return `'${word.replaceAll("'", "'\\''")}'`;
}

/**
 * The program reading a process's input, from the command the controller started it with: argv[0],
 * or a script's one command when the script is a single plain command (`python3 -i`, `bash`), when
 * that is a bare name; null when it cannot be told (a path, pipelines, lists, wrappers such as
 * `xargs` that read stdin themselves, names that are not literal).
 */
export function inputProgram(command: { argv: string[] } | { shell: string }): string | null {
  if ("argv" in command) return command.argv[0] ? bareName(command.argv[0]) : null;
  let parts: ReturnType<typeof analyzeBash>;
  try {
    parts = analyzeBash(command.shell);
  } catch {
    return null;
  }
  const commands = parts.filter((p) => p.kind === "command");
  const only = commands[0];
  if (commands.length !== 1 || only?.kind !== "command" || only.via.length > 0) return null;
  // A shell is opaque because it reads commands from stdin: that is its own part, nothing else's.
  if (parts.some((p) => p.kind === "opaque" && p.text !== only.text)) return null;
  const name = only.argv[0];
  return name && name.value !== null && !name.expands ? bareName(name.value) : null;
}

/** True when a rule of `policy` that covers the process tool names `program` in its `input`. */
function namedForInput(policy: Policy, program: string): boolean {
  return policy.layers.some((l) =>
    l.rules.some((r) => r.input?.includes(program) && r.tools.some((t) => t === "process" || t === "*")),
  );
}

/** The subject of an `input` call: the named program's, or opaque (see module doc). */
function inputSubject(policy: Policy, args: Record<string, unknown>, ctx: EvaluateContext): Subject {
  const id = typeof args.id === "string" ? args.id : String(args.id);
  const record = ctx.processRecord?.(id);
  if (!record) {
    const why = `input to process ${id}, which this session does not know, may be a command`;
    return { kind: "opaque", tools: ["process"], text: `input to ${id}`, why, via: [] };
  }
  const program = inputProgram(record.command);
  if (program !== null && namedForInput(policy, program))
    return {
      kind: "call",
      tools: ["process"],
      text: `input to ${id} (${program})`,
      action: "input",
      program,
    };
  const what = program ?? "a program that cannot be told from its command";
  const why = `input to process ${id} (${what}) may be a command it runs; no rule's input names ${program ?? "it"}`;
  return { kind: "opaque", tools: ["process"], text: `input to ${id} (${what})`, why, via: [] };
}

/**
 * The subjects of one process tool call (see module doc). `bashSubjects` analyses a start's
 * script; its subjects get the process tool among their tools, and their approval scopes are the
 * process tool's own (approving a bash command for the session does not approve it in the background).
 */
export async function processSubjects(
  policy: Policy,
  args: Record<string, unknown>,
  ctx: EvaluateContext,
  bashSubjects: BashSubjects,
  scopeOf: (...parts: unknown[]) => string,
  argsDigest: string,
): Promise<ScopedSubject[]> {
  const action = typeof args.action === "string" ? args.action : String(args.action);
  if (action === "start") {
    const { command, cwd } = args;
    // The directory as the tool resolves it (normalizeToolPath: relative to the workspace, `~`, `@`).
    const script =
      typeof cwd === "string" && typeof command === "string"
        ? `cd -- ${shellQuote(normalizeToolPath(cwd))}\n${command}`
        : command;
    const subjects = await bashSubjects(policy, script, ctx);
    return subjects.map(({ subject, scope }) => ({
      subject: { ...subject, tools: [...subject.tools, "process"] },
      scope: scopeOf("process", scope),
    }));
  }
  if (action === "input")
    return [{ subject: inputSubject(policy, args, ctx), scope: scopeOf("process", "input", argsDigest) }];
  const subject: Subject = { kind: "call", tools: ["process"], text: `process ${action}`, action };
  return [{ subject, scope: scopeOf("process", action, argsDigest) }];
}
