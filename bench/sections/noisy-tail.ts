/**
 * Where tenant B's slowest calls spent their time (noisy-neighbour section): the client's latency
 * of each call against the server's own timings of it, read from the server's audit log
 * (src/server/audit.ts: a `request` line per HTTP request and a `tool` line per tool call, each
 * with `durationMs`, whole ms). Of a call's latency at the client, the request line's time is spent
 * in the server between its request and response hooks, and the tool line's time, inside that, in
 * the call's pipeline (policy, the sandbox's exec over its channel, the result). What is left is
 * outside the server's hooks: the client, the loopback connection and the server's event loop
 * before it parsed the request. Pure but for `readCallTimings` and `printTails`.
 */
import { readFileSync } from "node:fs";

/** The server's timings of one call, ms. */
export interface CallTimings {
  requestMs: number;
  toolMs: number;
}

/** Means over a phase's slowest calls, ms. */
export interface TailSplit {
  /** How many calls: the slowest `fraction` of the phase, at least one. */
  calls: number;
  clientMs: number;
  requestMs: number;
  toolMs: number;
}

interface AuditLine {
  kind?: string;
  tenant?: string;
  route?: string;
  toolCallId?: string;
  durationMs?: number;
}

/**
 * The server's timings of tenant `tenant`'s tool calls, by tool call id, from the audit log at
 * `path` (JSON lines). Each request of that tenant must carry one call and none may overlap (B's
 * client sends one at a time), so its k-th tool-calls request line is its k-th tool line's request.
 * Throws when the counts differ (the lines cannot be paired).
 */
export function readCallTimings(path: string, tenant: string): Map<string, CallTimings> {
  const lines = readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as AuditLine)
    .filter((l) => l.tenant === tenant);
  const tools = lines.filter((l) => l.kind === "tool");
  const requests = lines.filter((l) => l.kind === "request" && l.route?.endsWith("/tool-calls"));
  if (tools.length !== requests.length)
    throw new Error(
      `${tenant}: ${tools.length} tool lines but ${requests.length} tool-calls requests in ${path}`,
    );
  return new Map(
    tools.map((t, k) => [
      String(t.toolCallId),
      { requestMs: requests[k]?.durationMs ?? 0, toolMs: t.durationMs ?? 0 },
    ]),
  );
}

/**
 * The means of the slowest `fraction` (0..1) of calls (`latencies[i]` ms at the client for call
 * `ids[i]`), with the server's timings of each; calls without timings are left out.
 */
export function tailSplit(
  latencies: readonly number[],
  ids: readonly string[],
  timings: ReadonlyMap<string, CallTimings>,
  fraction: number,
): TailSplit {
  const slowest = latencies
    .map((ms, i) => ({ ms, t: timings.get(ids[i] ?? "") }))
    .filter((c): c is { ms: number; t: CallTimings } => c.t !== undefined)
    .sort((a, b) => b.ms - a.ms)
    .slice(0, Math.max(1, Math.ceil(latencies.length * fraction)));
  const mean = (f: (c: (typeof slowest)[number]) => number) =>
    slowest.reduce((sum, c) => sum + f(c), 0) / Math.max(1, slowest.length);
  return {
    calls: slowest.length,
    clientMs: mean((c) => c.ms),
    requestMs: mean((c) => c.t.requestMs),
    toolMs: mean((c) => c.t.toolMs),
  };
}

/**
 * Prints (stderr) where B's slowest 1% of calls spent their time in each phase (tailSplit),
 * from the server's audit log at `auditPath`.
 */
export function printTails(
  auditPath: string,
  tenant: string,
  phases: Array<[string, { samples: number[]; ids: string[] }]>,
) {
  let timings: Map<string, CallTimings>;
  try {
    timings = readCallTimings(auditPath, tenant);
  } catch (err) {
    console.error(`noisy-neighbour: B's slowest calls not split (${String(err)})`);
    return;
  }
  for (const [label, { samples, ids }] of phases) {
    const t = tailSplit(samples, ids, timings, 0.01);
    console.error(
      `noisy-neighbour: B's slowest 1% (${t.calls} calls), ${label}: ${t.clientMs.toFixed(1)} ms at the client, ` +
        `${t.requestMs.toFixed(1)} in the server's request hooks, ${t.toolMs.toFixed(1)} in the tool call (pipeline and sandbox exec)`,
    );
  }
}
