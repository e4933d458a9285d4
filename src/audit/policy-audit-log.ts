/**
 * The policy audit log (`PolicyAuditLog`): one pino JSON line per policy decision, with time (epoch ms), session, tool, a
 * sha256 digest of the arguments (never the arguments themselves: they may hold secrets), decision,
 * rule id, decider and latency. File destinations are written synchronously (pino's sync
 * SonicBoom), so a crash leaves complete lines only.
 */
import { createHash } from "node:crypto";
import { type Logger, pino } from "pino";
import type { CallVerdict, Decider } from "../pipeline/index.js";

/** One policy decision's audit record (the fields of its JSON line, besides pino's level / time / msg). */
export interface PolicyAuditRecord {
  session: string;
  tool: string;
  toolCallId?: string;
  /** `sha256:<hex>` of the arguments' canonical JSON (object keys sorted). */
  argsDigest: string;
  decision: CallVerdict;
  ruleId?: string;
  decider: Decider;
  /** From the start of evaluation to the final answer (approval included), in ms. */
  latencyMs: number;
}

/**
 * Where policy decision records go (the policy hook, src/policy/hook.ts). Not the
 * server's request and tool log, which is `ServerAuditLog` (src/server/audit.ts).
 */
export interface PolicyAuditLog {
  record(entry: PolicyAuditRecord): void;
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

/** `sha256:<hex>` of `args` serialised as JSON with sorted keys (equal args, equal digest). */
export function digestArgs(args: unknown): string {
  const json = JSON.stringify(canonical(args)) ?? "undefined";
  return `sha256:${createHash("sha256").update(json).digest("hex")}`;
}

/**
 * A policy audit log writing to `target`: a file path (appended, created with parents, written
 * synchronously) or an existing pino logger (a child with `component: "audit"`).
 */
export function createPolicyAuditLog(target: string | Logger): PolicyAuditLog {
  const logger =
    typeof target === "string"
      ? pino(
          { base: null, timestamp: pino.stdTimeFunctions.epochTime },
          pino.destination({ dest: target, sync: true, append: true, mkdir: true }),
        )
      : target.child({ component: "audit" });
  return {
    record: (entry) => logger.info(entry, "policy decision"),
  };
}
