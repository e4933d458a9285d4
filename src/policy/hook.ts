/**
 * The policy as the pipeline's beforeToolCall stage: evaluate, ask an approver when the policy
 * says ask, write one audit line (and report the decision on the call: ctx.noteDecision), and block
 * with a reason naming what was refused and by which rule, so the model can adapt. Nothing runs
 * unless the policy allows it or a person approves it.
 */
import type { Logger } from "pino";
import {
  createPolicyAuditLog,
  digestArgs,
  type PolicyAuditLog,
  type PolicyAuditRecord,
} from "../audit/index.js";
import type { BeforeToolCallContext, BeforeToolCallHook, Decider } from "../pipeline/index.js";
import type { Sandbox } from "../sandbox/index.js";
import { existingVariant, normalizeToolPath, readPathVariants } from "../tools/index.js";
import { omitUndefined } from "../util/index.js";
import type { ApprovalProvider } from "./approver.js";
import { CommandTooLongError } from "./command-limit.js";
import { MAX_GIT_FILE_BYTES } from "./commands/git-config.js";
import { evaluate } from "./evaluate.js";
import { walkDirectory } from "./live-walk.js";
import { loadPolicy } from "./load.js";
import type { Decision, Policy, TrailEntry } from "./types.js";

/** Default time an approver has to answer, in ms (5 minutes); then the call is denied. */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 300_000;

/** Options of createPolicyHook. */
export interface PolicyHookOptions {
  policy: Policy;
  /** Who answers `ask`. Absent: nobody (ask means deny, decider non-interactive). */
  approval?: ApprovalProvider;
  audit?: PolicyAuditLog;
  sessionId: string;
  /** Passed on to approval requests (server: API key owner and tenant). */
  owner?: string;
  tenant?: string;
  /** Default DEFAULT_APPROVAL_TIMEOUT_MS. */
  approvalTimeoutMs?: number;
}

function ruleText(d: Pick<Decision, "ruleId" | "layer" | "reason">): string {
  if (!d.ruleId) return d.reason ?? "the policy";
  const rule = `rule '${d.ruleId}'${d.layer ? ` (${d.layer} policy)` : ""}`;
  return d.reason ? `${rule}: ${d.reason}` : rule;
}

/**
 * The text the model gets for a refused call, e.g. `Tool call refused: bash part 'rm -rf src' is
 * denied by rule 'deny-rm' (operator policy): deleting files is not allowed. Nothing was run.`
 */
function refusalReason(
  tool: string,
  decision: Decision,
  decider: Decider,
  nonInteractiveReason = "this session is non-interactive",
): string {
  const what = `${tool}${decision.part && decision.part !== tool ? ` part '${decision.part}'` : ""}`;
  let why: string;
  if (decider === "policy") why = `is denied by ${ruleText(decision)}`;
  else if (decider === "user") why = `needs approval (${ruleText(decision)}) and the approver denied it`;
  else if (decider === "timeout") why = `needs approval (${ruleText(decision)}) and no answer came in time`;
  else why = `needs approval (${ruleText(decision)}) and ${nonInteractiveReason}, so it is denied`;
  return `Tool call refused: ${what} ${why}. Nothing was run.`;
}

/** Writes `entry` to the audit log and reports the decision on the call itself (see BeforeToolCallContext). */
function report(
  ctx: BeforeToolCallContext,
  audit: PolicyAuditLog | undefined,
  entry: PolicyAuditRecord,
  approvalMs?: number,
): void {
  audit?.record(entry);
  const { decision, ruleId, decider } = entry;
  ctx.noteDecision?.({
    decision,
    ...(ruleId ? { rule: ruleId } : {}),
    decider,
    ...(approvalMs === undefined ? {} : { approvalMs }),
  });
}

/**
 * What an "allow for this session" answer to `decision` covers: the approval scope of each part
 * that asked (TrailEntry.approvalScope: the exact analysed part, or the whole command for a part
 * that depends on it). Empty when a part that asked has no scope: then nothing is remembered.
 */
function askKeys(trail: TrailEntry[]): string[] {
  const asks = trail.filter((e) => e.decision === "ask");
  const keys = asks.map((e) => e.approvalScope).filter((k): k is string => k !== undefined);
  return keys.length === asks.length ? keys : [];
}

/**
 * A small regular file's text in the sandbox, or null when absent or not a regular file: at most
 * MAX_GIT_FILE_BYTES + 1 bytes, so that commands/git-config.ts sees a longer file as longer (and asks).
 */
async function readSmallText(sandbox: Sandbox, path: string, signal?: AbortSignal): Promise<string | null> {
  const stat = await sandbox.stat(path, signal ? { signal } : {});
  if (stat?.type !== "file") return null;
  const read = await sandbox.readFile(
    path,
    { kind: "bytes", offset: 0, length: MAX_GIT_FILE_BYTES + 1 },
    signal ? { signal } : {},
  );
  return read.data.toString("utf8");
}

/** The beforeToolCall hook enforcing `options.policy` (see module doc). */
export function createPolicyHook(options: PolicyHookOptions): BeforeToolCallHook {
  const sessionAllowed = new Set<string>();
  // Without a provider nobody is asked: ask means deny (decider non-interactive).
  const approval: ApprovalProvider | undefined = options.approval;
  const timeoutMs = options.approvalTimeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS;

  return async (ctx: BeforeToolCallContext) => {
    const started = performance.now();
    const resolved = new Map<string, Promise<string>>();
    const resolvePath = (path: string) => {
      let p = resolved.get(path);
      if (!p) {
        p = ctx.sandbox.realpath(path, omitUndefined({ signal: ctx.signal }));
        resolved.set(path, p);
      }
      return p;
    };
    const { sandbox, signal } = ctx;
    // Only a name with another spelling costs a stat (most have none).
    const readVariant = async (path: string) =>
      readPathVariants(normalizeToolPath(path)).length > 0 &&
      (await sandbox.stat(await resolvePath(normalizeToolPath(path)), omitUndefined({ signal }))) === null
        ? existingVariant(path, { sandbox, ...omitUndefined({ signal }) })
        : undefined;
    let decision: Decision;
    try {
      const readText = (path: string) => readSmallText(ctx.sandbox, path, ctx.signal);
      // Listings, globs and recursive searches are judged with the workspace's files (live-paths.ts).
      const walk = (dir: string, hidden: boolean) => walkDirectory(sandbox, dir, hidden, signal);
      // The process a process tool call names, as the controller recorded it (never the sandbox's word).
      const processRecord = (id: string) => ctx.processes?.records().find((r) => r.id === id);
      decision = await evaluate(
        options.policy,
        { tool: ctx.tool.name, args: ctx.args },
        { resolvePath, readVariant, readText, walk, processRecord },
      );
    } catch (err) {
      // Fail closed: a call the policy could not judge does not run.
      const detail = err instanceof Error ? err.message : String(err);
      const why =
        err instanceof CommandTooLongError ? detail : `the policy could not be evaluated (${detail}).`;
      report(ctx, options.audit, {
        session: options.sessionId,
        tool: ctx.tool.name,
        toolCallId: ctx.call.id,
        argsDigest: digestArgs(ctx.args),
        decision: "deny",
        decider: "policy",
        latencyMs: Math.round((performance.now() - started) * 1000) / 1000,
      });
      return {
        block: true,
        reason: `Tool call refused: ${why} Nothing was run.`,
      };
    }
    let decider: Decider = "policy";
    let allowed = decision.decision === "allow";
    let approvalMs: number | undefined;
    if (decision.decision === "ask") {
      const keys = askKeys(decision.trail);
      if (keys.length > 0 && keys.every((k) => sessionAllowed.has(k))) {
        decider = "user";
        allowed = true;
      } else if (approval === undefined || approval.interactive === false) {
        decider = "non-interactive";
      } else {
        const controller = new AbortController();
        let timedOut = false;
        const timer = setTimeout(() => {
          timedOut = true;
          controller.abort();
        }, timeoutMs);
        const stopFollowing = () => ctx.signal?.removeEventListener("abort", abortFromCall);
        const abortFromCall = () => controller.abort();
        ctx.signal?.addEventListener("abort", abortFromCall, { once: true });
        const asked = performance.now();
        try {
          const answer = await approval.request({
            tool: ctx.tool.name,
            args: ctx.args,
            decision,
            signal: controller.signal,
            toolCallId: ctx.call.id,
            sessionId: options.sessionId,
            ...omitUndefined({ owner: options.owner, tenant: options.tenant }),
          });
          decider = timedOut ? "timeout" : "user";
          allowed = !timedOut && answer !== "deny";
          if (allowed && answer === "allow-session") for (const k of keys) sessionAllowed.add(k);
        } catch {
          decider = timedOut ? "timeout" : "user";
          allowed = false;
        } finally {
          clearTimeout(timer);
          stopFollowing();
          approvalMs = Math.round(performance.now() - asked);
        }
      }
    }
    report(
      ctx,
      options.audit,
      {
        session: options.sessionId,
        tool: ctx.tool.name,
        toolCallId: ctx.call.id,
        argsDigest: digestArgs(ctx.args),
        decision: allowed ? "allow" : "deny",
        ...omitUndefined({ ruleId: decision.ruleId }),
        decider,
        latencyMs: Math.round((performance.now() - started) * 1000) / 1000,
      },
      approvalMs,
    );
    if (allowed) return undefined;
    return {
      block: true,
      reason: refusalReason(ctx.tool.name, decision, decider, approval?.nonInteractiveReason),
    };
  };
}

/** Options of createPolicyHookFromFiles (the CLI's entry). */
export interface PolicyHookFromFilesOptions {
  approval?: ApprovalProvider;
  /** True: ask means deny, whatever `approval` is. */
  nonInteractive?: boolean;
  /** A file path (JSON lines) or a pino logger. */
  auditLog?: string | Logger;
  sessionId: string;
  approvalTimeoutMs?: number;
}

/** Loads `files` (loadPolicy: highest authority first) and returns the hook. Throws PolicyInvalidError. */
export async function createPolicyHookFromFiles(
  files: string[],
  options: PolicyHookFromFilesOptions,
): Promise<BeforeToolCallHook> {
  const policy = await loadPolicy(files);
  return createPolicyHook(
    omitUndefined({
      policy,
      approval: options.nonInteractive ? undefined : options.approval,
      audit: options.auditLog === undefined ? undefined : createPolicyAuditLog(options.auditLog),
      sessionId: options.sessionId,
      approvalTimeoutMs: options.approvalTimeoutMs,
    }),
  );
}
