/**
 * evaluate(): the decision on one tool call. Bash scripts are analysed into parts (bash/analyze.ts),
 * path tools are judged on the canonical path, the process tool as process-subjects.ts says, any
 * other tool on its name; the call's decision is the strictest over all parts, and names the first
 * part and rule that set it.
 */
import { createHash } from "node:crypto";
import { digestArgs } from "../audit/index.js";
import { WORKSPACE_DIR } from "../sandbox/index.js";
import { normalizeToolPath } from "../tools/index.js";
import { analyzeBash } from "./bash/analyze.js";
import { isProcessFdPath } from "./bash/fds.js";
import { loadBashParser } from "./bash/parser.js";
import type { BashPart } from "./bash/parts.js";
import { checkCommandSize, maxCommandBytes } from "./command-limit.js";
import { type CommandWords, type ReadText, scriptGitHazard } from "./commands/git-config.js";
import {
  livePaths,
  type RecursiveRead,
  recursiveReads,
  scriptWritesNothing,
  type Walk,
} from "./live-paths.js";
import { judge, type Subject } from "./match.js";
import { processSubjects } from "./process-subjects.js";
import { searchGlobs } from "./search-glob.js";
import type { Decision, EvaluateContext, Policy, PolicyRequest, TrailEntry } from "./types.js";
import { DECISION_RANK } from "./types.js";

/** Tools whose `path` argument (default: the workspace) is judged by path rules. */
const PATH_TOOLS = new Set(["read", "edit", "write", "grep", "find", "ls"]);

function argsRecord(args: unknown): Record<string, unknown> {
  return typeof args === "object" && args !== null ? (args as Record<string, unknown>) : {};
}

/** Rules of these tools judge a bash command's file arguments (`cat .env` reads like `read .env`). */
const ARGUMENT_TOOLS = new Set(["bash", "process", "read", "*"]);

/** A subject and what a session approval of it covers (TrailEntry.approvalScope). */
interface Scoped {
  subject: Subject;
  scope: string;
}

function scopeKey(...parts: unknown[]): string {
  return JSON.stringify(parts);
}

/**
 * sha256 of a text, memoised per call: the argument parts of one command share its text, so each
 * distinct text is hashed once (hashing, or copying, it per part would be quadratic).
 */
function hasher(): (text: string) => string {
  const seen = new Map<string, string>();
  return (text) => {
    let digest = seen.get(text);
    if (digest === undefined) {
      digest = createHash("sha256").update(text).digest("base64");
      seen.set(text, digest);
    }
    return digest;
  };
}

/** Whether any rule of `policy` judges a bash command's file arguments (deny / ask path rules). */
function checksArguments(policy: Policy): boolean {
  return policy.layers.some((l) =>
    l.rules.some((r) => r.decision !== "allow" && r.paths && r.tools.some((t) => ARGUMENT_TOOLS.has(t))),
  );
}

/**
 * The subject of a file part whose path was resolved to `path`: a path that a symbolic link led
 * into some process's descriptor table (`/proc/14/fd/…`, e.g. a workspace link to /dev/stdout) was
 * resolved through warden's helper, not the command: what the command would open cannot be told.
 */
function throughFdLink(path: string, part: { text: string; via: string[] }): Scoped | null {
  if (!isProcessFdPath(path)) return null;
  const why =
    "the path leads through a link to a file descriptor (/dev/fd); the policy cannot tell which file the command would open";
  const subject: Subject = { kind: "opaque", tools: ["bash"], text: part.text, why, via: part.via };
  return { subject, scope: scopeKey("bash", "opaque", part.text, why) };
}

async function bashSubjects(policy: Policy, command: unknown, ctx: EvaluateContext): Promise<Scoped[]> {
  if (typeof command !== "string") {
    const text = String(command);
    const subject: Subject = {
      kind: "opaque",
      tools: ["bash"],
      text,
      why: "command is not a string",
      via: [],
    };
    return [{ subject, scope: scopeKey("bash", "opaque", typeof command, text) }];
  }
  checkCommandSize(command, maxCommandBytes(policy));
  await loadBashParser();
  const parts: BashPart[] = analyzeBash(command);
  const withArguments = checksArguments(policy);
  const hash = hasher();
  // A part that stands alone is approved by its argv; any other only with the exact command around it.
  const identity = (part: BashPart) =>
    "identity" in part && part.identity !== null
      ? ["argv", hash(part.identity)]
      : ["script", hash(command), part.via, hash(part.text)];
  const subjects: (Scoped | Promise<Scoped | Scoped[]>)[] = [];
  const walk = memoisedWalk(ctx);
  // Listings and globs are judged with the workspace's files only when nothing in the script writes.
  const live = walk && scriptWritesNothing(parts) ? walk : undefined;
  for (const part of parts) {
    if (part.kind === "command" || part.kind === "opaque") {
      const subject: Subject = { ...part, tools: ["bash"] };
      subjects.push({ subject, scope: scopeKey("bash", part.kind, identity(part)) });
    } else if (part.kind === "argument") {
      if (!withArguments) continue;
      if (part.glob) {
        // An expanding word: its glob is matched as is (no sandbox path to resolve).
        const subject: Subject = {
          kind: "argument",
          tools: ["bash", "read"],
          path: part.target,
          via: part.via,
          glob: true,
          ...(part.why ? { why: part.why } : {}),
          ...(part.found ? { found: part.found } : {}),
          ...(part.word !== undefined ? { word: part.word } : {}),
        };
        const scoped = { subject, scope: scopeKey("bash", "argument", part.target, identity(part)) };
        if (!live) subjects.push(scoped);
        else
          subjects.push(
            judgedLive(policy, scoped, live, ctx, (path) =>
              scopeKey("bash", "argument", path, identity(part)),
            ),
          );
        continue;
      }
      // An argument is only possibly a path: when it cannot be resolved (e.g. a directory the
      // sandbox user may not enter), it is judged on its lexical form instead of failing the call.
      // A stream of the command (bash/fds.ts) is judged by its name: the helper's are not its.
      const lexical = normalizeToolPath(part.target, WORKSPACE_DIR);
      const scoped = async (): Promise<Scoped> => {
        const path = part.stream ? part.target : await ctx.resolvePath(lexical).catch(() => lexical);
        const viaLink = throughFdLink(path, part);
        if (viaLink) return viaLink;
        const subject: Subject = { kind: "argument", tools: ["bash", "read"], path, via: part.via };
        return { subject, scope: scopeKey("bash", "argument", path, identity(part)) };
      };
      subjects.push(scoped());
    } else {
      const scoped = async (): Promise<Scoped> => {
        const lexical = normalizeToolPath(part.target, WORKSPACE_DIR);
        // A command's own argument is only possibly a path (as above); a redirection must resolve.
        const path = part.stream
          ? part.target
          : await ctx.resolvePath(lexical).catch((err: unknown) => {
              if (part.argument) return lexical;
              throw err;
            });
        const viaLink = throughFdLink(path, part);
        if (viaLink) return viaLink;
        const subject: Subject = { kind: part.kind, tools: ["bash", part.kind], path, via: part.via };
        return { subject, scope: scopeKey("bash", part.kind, path) };
      };
      subjects.push(scoped());
    }
  }
  // A recursive search reads every file below its directories: each is judged as the path it is.
  if (walk && withArguments)
    for (const read of recursiveReads(parts))
      subjects.push(recursiveSubjects(policy, read, walk, ctx, live === undefined));
  return (await Promise.all(subjects)).flat();
}

/** `ctx.walk`, each directory walked once per evaluation; undefined without a live context. */
function memoisedWalk(ctx: EvaluateContext): Walk | undefined {
  const walk = ctx.walk?.bind(ctx);
  if (!walk) return undefined;
  const walked = new Map<string, ReturnType<Walk>>();
  return (dir, hidden) => {
    const key = `${hidden}:${dir}`;
    let entries = walked.get(key);
    if (!entries) {
      entries = walk(dir, hidden).catch(() => null);
      walked.set(key, entries);
    }
    return entries;
  };
}

/**
 * An argument glob judged live (live-paths.ts): when its lexical answer is ask and the sandbox can
 * tell the paths it produces now, the subjects of those paths that a deny or ask rule names
 * (none: nothing it produces is refused); else the glob's own subject.
 */
async function judgedLive(
  policy: Policy,
  scoped: Scoped,
  walk: Walk,
  ctx: EvaluateContext,
  scopeOf: (path: string) => string,
): Promise<Scoped | Scoped[]> {
  const { subject } = scoped;
  // A glob with its own reason (`why`: a git object, rg's -g) is not a bash glob: kept lexical.
  if (subject.kind !== "argument" || subject.why || judge(policy, subject).decision !== "ask") return scoped;
  const paths = await livePaths(subject.path, subject.found, walk, (p) => ctx.resolvePath(p));
  if (paths === null) return scoped;
  return refusedPaths(policy, paths, subject.via, scopeOf);
}

/** The argument subjects of `paths` that a deny or ask path rule names. */
function refusedPaths(
  policy: Policy,
  paths: readonly string[],
  via: string[],
  scopeOf: (path: string) => string,
): Scoped[] {
  const out: Scoped[] = [];
  for (const path of paths) {
    const subject: Subject = { kind: "argument", tools: ["bash", "read"], path, via };
    if (judge(policy, subject).decision !== "allow") out.push({ subject, scope: scopeOf(path) });
  }
  return out;
}

/**
 * The files below a recursive search's directories that a deny or ask path rule names; an opaque
 * subject (never allowed) when its directories are not known here or one cannot be walked (a
 * directory the sandbox user may not read, more than MAX_WALK_ENTRIES), holds a link to a directory
 * that the search follows (grep -R, rg -L), or is not there in a
 * script that `writes` (it may create it first): what it reads there is not known, and a command
 * can make either happen (`chmod 000 d`).
 */
async function recursiveSubjects(
  policy: Policy,
  read: RecursiveRead,
  walk: Walk,
  ctx: EvaluateContext,
  writes: boolean,
): Promise<Scoped[]> {
  const paths: string[] = [];
  const unknown = (why: string): Scoped[] => {
    const subject: Subject = {
      kind: "opaque",
      tools: ["bash"],
      text: read.part.text,
      why,
      via: read.part.via,
    };
    return [{ subject, scope: scopeKey("bash", "opaque", read.part.text, why) }];
  };
  if (read.dirs === null)
    return unknown("a recursive search in a directory not known here may read any file");
  for (const dir of read.dirs) {
    const entries = await walk(await ctx.resolvePath(dir).catch(() => dir), read.hidden);
    if (entries === null || (writes && entries.length === 0))
      return unknown(
        `a recursive search below ${dir}, whose files cannot all be listed, may read any of them`,
      );
    // What is below a link to a directory is not walked (find -P): a search that follows it reads it.
    if (read.follows && entries.some((e, k) => k > 0 && e.type === "l" && e.to === "d"))
      return unknown(
        `a recursive search below ${dir} follows a link to a directory there, whose files are not listed`,
      );
    for (const entry of entries) {
      paths.push(entry.path);
      if (entry.type === "l") paths.push(await ctx.resolvePath(entry.path).catch(() => entry.path));
    }
  }
  const scopeOf = (path: string) => scopeKey("bash", "argument", path, "script", read.part.text);
  return refusedPaths(policy, paths, read.part.via, scopeOf);
}

/** A trail entry asking when an allowed git command may run a program from configuration. */
async function gitEntry(subjects: Scoped[], trail: TrailEntry[], read: ReadText): Promise<TrailEntry | null> {
  const commands: CommandWords[] = [];
  const allowedGit: CommandWords[] = [];
  subjects.forEach(({ subject }, k) => {
    if (subject.kind !== "command") return;
    const words = subject.argv.map((w) => w.value);
    commands.push(words);
    const name = words[0] ?? "";
    if (name.slice(name.lastIndexOf("/") + 1) !== "git" || trail[k]?.decision !== "allow") return;
    // Run by a wrapper in another directory (`env -C DIR git …`): git finds its repository from
    // there, as `git -C DIR` would; a directory not known is like a `cd` to one.
    if (subject.cwd === null) commands.push(["cd"]);
    allowedGit.push(subject.cwd ? [words[0] ?? "git", "-C", subject.cwd, ...words.slice(1)] : words);
  });
  // Configuration that cannot be read (a workspace the sandbox user may not enter) is not known
  // to be free of programs: ask.
  const why = await scriptGitHazard(read, commands, allowedGit).catch(
    (err: unknown) =>
      `git's configuration could not be read (${err instanceof Error ? err.message : String(err)})`,
  );
  if (why === null) return null;
  const text = allowedGit.map((w) => w.join(" ")).join("; ");
  return {
    kind: "opaque",
    part: text,
    decision: "ask",
    reason: why,
    approvalScope: scopeKey("bash", "git-config", text, why),
  };
}

/**
 * Decides `request` under `policy`. Path tools: `args.path` (default ".") is normalised
 * (normalizeToolPath) and resolved with `ctx.resolvePath`; grep's `glob` is judged too (searchGlobs).
 * Rejects when resolvePath rejects, and with CommandTooLongError (before parsing) for a bash
 * command over the policy's maxCommandBytes.
 * A policy with a nonInteractive layer turns the final `ask` into `deny`.
 */
export async function evaluate(
  policy: Policy,
  request: PolicyRequest,
  ctx: EvaluateContext,
): Promise<Decision> {
  const args = argsRecord(request.args);
  const tool = request.tool;
  let subjects: Scoped[];
  const runsScript = tool === "bash" || (tool === "process" && args.action === "start");
  if (tool === "bash") subjects = await bashSubjects(policy, args.command, ctx);
  else if (tool === "process")
    subjects = await processSubjects(policy, args, ctx, bashSubjects, scopeKey, digestArgs(request.args));
  else if (PATH_TOOLS.has(tool)) {
    const raw = typeof args.path === "string" && args.path !== "" ? args.path : ".";
    const path = await ctx.resolvePath(normalizeToolPath(raw));
    // read opens another spelling of a name that does not exist: that file is judged too.
    const variant = tool === "read" ? await ctx.readVariant?.(raw) : undefined;
    subjects = [path, ...(variant !== undefined && variant !== path ? [variant] : [])].map((p) => ({
      subject: { kind: "path", tools: [tool], path: p, via: [] },
      scope: scopeKey(tool, "path", p),
    }));
    if (tool === "grep")
      for (const selected of searchGlobs(path, args.glob)) {
        const why = "the grep tool's glob selects the files it searches, ignored ones too";
        const subject: Subject = {
          kind: "argument",
          tools: ["grep"],
          path: selected,
          via: [],
          glob: true,
          why,
        };
        subjects.push({ subject, scope: scopeKey("grep", "glob", selected) });
      }
  } else {
    // The policy sees only the tool's name; a session approval covers these exact arguments.
    const subject: Subject = { kind: "call", tools: [tool], text: tool };
    subjects = [{ subject, scope: scopeKey(tool, "call", digestArgs(request.args)) }];
  }
  if (subjects.length === 0) {
    // An empty script (only comments or assignments) runs nothing; judge it as a bare bash call.
    const subject: Subject = { kind: "call", tools: ["bash"], text: "(empty script)" };
    subjects.push({ subject, scope: scopeKey("bash", "call", "(empty script)") });
  }

  const trail: TrailEntry[] = subjects.map(({ subject, scope }) => {
    const entry = judge(policy, subject);
    entry.approvalScope = scope;
    return entry;
  });
  if (runsScript && ctx.readText) {
    const entry = await gitEntry(subjects, trail, ctx.readText);
    if (entry) trail.push(entry);
  }
  let decisive = trail[0] as TrailEntry;
  for (const entry of trail)
    if (DECISION_RANK[entry.decision] > DECISION_RANK[decisive.decision]) decisive = entry;
  const decision: Decision = { decision: decisive.decision, part: decisive.part, trail };
  if (decisive.ruleId) decision.ruleId = decisive.ruleId;
  if (decisive.reason) decision.reason = decisive.reason;
  if (decisive.layer) decision.layer = decisive.layer;
  if (decision.decision === "ask" && policy.layers.some((l) => l.nonInteractive)) {
    decision.decision = "deny";
    decision.reason = `${decision.reason ? `${decision.reason}; ` : ""}would ask, and the policy is non-interactive`;
  }
  return decision;
}

/** Resolves paths lexically (no sandbox): for `warden policy explain` / `check` and unit tests. */
export const lexicalContext: EvaluateContext = {
  resolvePath: async (path) => normalizeToolPath(path),
};
