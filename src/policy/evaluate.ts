/**
 * evaluate(): the decision on one tool call. Bash scripts are analysed into parts (bash-analyze.ts),
 * path tools are judged on the canonical path, any other tool on its name; the call's decision is
 * the strictest over all parts, and names the first part and rule that set it.
 */
import { WORKSPACE_DIR } from "../sandbox/types.js";
import { normalizeToolPath } from "../tools/paths.js";
import { analyzeBash, type BashPart } from "./bash-analyze.js";
import { loadBashParser } from "./bash-parser.js";
import { judge, type Subject } from "./match.js";
import type { Decision, EvaluateContext, Policy, PolicyRequest, TrailEntry } from "./types.js";
import { DECISION_RANK } from "./types.js";

/** Tools whose `path` argument (default: the workspace) is judged by path rules. */
export const PATH_TOOLS = new Set(["read", "edit", "write", "grep", "find", "ls"]);

function argsRecord(args: unknown): Record<string, unknown> {
  return typeof args === "object" && args !== null ? (args as Record<string, unknown>) : {};
}

/** Rules of these tools judge a bash command's file arguments (`cat .env` reads like `read .env`). */
const ARGUMENT_TOOLS = new Set(["bash", "read", "*"]);

async function bashSubjects(policy: Policy, command: unknown, ctx: EvaluateContext): Promise<Subject[]> {
  if (typeof command !== "string") {
    return [
      { kind: "opaque", tools: ["bash"], text: String(command), why: "command is not a string", via: [] },
    ];
  }
  await loadBashParser();
  const parts: BashPart[] = analyzeBash(command);
  const checksArguments = policy.layers.some((l) =>
    l.rules.some((r) => r.decision !== "allow" && r.paths && r.tools.some((t) => ARGUMENT_TOOLS.has(t))),
  );
  const subjects = parts.map(async (part): Promise<Subject | undefined> => {
    if (part.kind === "command" || part.kind === "opaque") return { ...part, tools: ["bash"] };
    if (part.kind === "argument") {
      if (!checksArguments) return undefined;
      // An argument is only possibly a path: when it cannot be resolved (e.g. a directory the
      // sandbox user may not enter), it is judged on its lexical form instead of failing the call.
      const lexical = normalizeToolPath(part.target, WORKSPACE_DIR);
      const path = await ctx.resolvePath(lexical).catch(() => lexical);
      return { kind: "argument", tools: ["bash", "read"], path, via: part.via };
    }
    const path = await ctx.resolvePath(normalizeToolPath(part.target, WORKSPACE_DIR));
    return { kind: part.kind, tools: ["bash", part.kind], path, via: part.via };
  });
  return (await Promise.all(subjects)).filter((s): s is Subject => s !== undefined);
}

/**
 * Decides `request` under `policy`. Path tools: `args.path` (default ".") is normalised
 * (normalizeToolPath) and resolved with `ctx.resolvePath`. Rejects only when resolvePath rejects.
 * A policy with a nonInteractive layer turns the final `ask` into `deny`.
 */
export async function evaluate(
  policy: Policy,
  request: PolicyRequest,
  ctx: EvaluateContext,
): Promise<Decision> {
  const args = argsRecord(request.args);
  let subjects: Subject[];
  if (request.tool === "bash") subjects = await bashSubjects(policy, args.command, ctx);
  else if (PATH_TOOLS.has(request.tool)) {
    const raw = typeof args.path === "string" && args.path !== "" ? args.path : ".";
    const path = await ctx.resolvePath(normalizeToolPath(raw));
    subjects = [{ kind: "path", tools: [request.tool], path, via: [] }];
  } else subjects = [{ kind: "call", tools: [request.tool], text: request.tool }];

  const trail: TrailEntry[] = subjects.map((s) => judge(policy, s));
  if (trail.length === 0) {
    // An empty script (only comments or assignments) runs nothing; judge it as a bare bash call.
    trail.push(judge(policy, { kind: "call", tools: ["bash"], text: "(empty script)" }));
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
