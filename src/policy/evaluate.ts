/**
 * evaluate(): the decision on one tool call. Bash scripts are analysed into parts (bash-analyze.ts),
 * path tools are judged on the canonical path, any other tool on its name; the call's decision is
 * the strictest over all parts, and names the first part and rule that set it.
 */
import { createHash } from "node:crypto";
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

/** A subject and what a session approval of it covers (TrailEntry.approvalScope). */
interface Scoped {
  subject: Subject;
  scope: string;
}

function scopeKey(...parts: unknown[]): string {
  return JSON.stringify(parts);
}

/** Digest of the whole command, computed once per call (hashing it per part would be quadratic). */
function scriptDigest(command: string): () => string {
  let digest: string | undefined;
  return () => {
    digest ??= createHash("sha256").update(command).digest("hex");
    return digest;
  };
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
  await loadBashParser();
  const parts: BashPart[] = analyzeBash(command);
  const checksArguments = policy.layers.some((l) =>
    l.rules.some((r) => r.decision !== "allow" && r.paths && r.tools.some((t) => ARGUMENT_TOOLS.has(t))),
  );
  const digest = scriptDigest(command);
  // A part that does not stand alone is approved only together with the exact command around it.
  const inScript = (part: BashPart) => ["script", digest(), part.via, part.text];
  const subjects = parts.map(async (part): Promise<Scoped | undefined> => {
    if (part.kind === "command") {
      const scope = scopeKey("bash", "command", part.identity ?? inScript(part));
      return { subject: { ...part, tools: ["bash"] }, scope };
    }
    if (part.kind === "opaque")
      return { subject: { ...part, tools: ["bash"] }, scope: scopeKey("bash", "opaque", inScript(part)) };
    if (part.kind === "argument") {
      if (!checksArguments) return undefined;
      // An argument is only possibly a path: when it cannot be resolved (e.g. a directory the
      // sandbox user may not enter), it is judged on its lexical form instead of failing the call.
      const lexical = normalizeToolPath(part.target, WORKSPACE_DIR);
      const path = await ctx.resolvePath(lexical).catch(() => lexical);
      const subject: Subject = { kind: "argument", tools: ["bash", "read"], path, via: part.via };
      return { subject, scope: scopeKey("bash", "argument", path, part.identity ?? inScript(part)) };
    }
    const path = await ctx.resolvePath(normalizeToolPath(part.target, WORKSPACE_DIR));
    const subject: Subject = { kind: part.kind, tools: ["bash", part.kind], path, via: part.via };
    return { subject, scope: scopeKey("bash", part.kind, path) };
  });
  return (await Promise.all(subjects)).filter((s): s is Scoped => s !== undefined);
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
  const tool = request.tool;
  let subjects: Scoped[];
  if (tool === "bash") subjects = await bashSubjects(policy, args.command, ctx);
  else if (PATH_TOOLS.has(tool)) {
    const raw = typeof args.path === "string" && args.path !== "" ? args.path : ".";
    const path = await ctx.resolvePath(normalizeToolPath(raw));
    subjects = [
      { subject: { kind: "path", tools: [tool], path, via: [] }, scope: scopeKey(tool, "path", path) },
    ];
  } else subjects = [{ subject: { kind: "call", tools: [tool], text: tool }, scope: scopeKey(tool, "call") }];
  if (subjects.length === 0) {
    // An empty script (only comments or assignments) runs nothing; judge it as a bare bash call.
    const subject: Subject = { kind: "call", tools: ["bash"], text: "(empty script)" };
    subjects.push({ subject, scope: scopeKey("bash", "call", "(empty script)") });
  }

  const trail: TrailEntry[] = subjects.map(({ subject, scope }) => ({
    ...judge(policy, subject),
    approvalScope: scope,
  }));
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
