/**
 * How sessions leave the registry: closed one at a time (DELETE, MCP, a client gone before its
 * create answered), reaped when idle or past their lifetime, or all at shutdown.
 */
import { rm } from "node:fs/promises";
import { tenantOf } from "../config/index.js";
import type { SessionContext } from "./context.js";

/** What closeSession works with. */
export type CloseContext = Pick<
  SessionContext,
  "registry" | "pendingRw" | "metrics" | "records" | "networkSlots" | "audit"
> &
  Partial<Pick<SessionContext, "calls">>;

/**
 * Closes a session: aborts its running batches, denies its pending asks, destroys the container,
 * then drops its record. Idempotent; unknown ids are ignored.
 */
export async function closeSession(ctx: CloseContext, sessionId: string, reason: string): Promise<void> {
  const live = ctx.registry.remove(sessionId);
  if (!live) return;
  live.closing = true;
  // Its sandbox may run until its container is gone: its rw workspace still counts as live.
  const { workspaceMode, workspaceHostPath } = live.record;
  if (workspaceMode === "rw" && workspaceHostPath) ctx.pendingRw.set(sessionId, workspaceHostPath);
  for (const c of live.running) c.abort();
  ctx.metrics.sessions.dec({ tenant: live.record.tenant });
  ctx.calls?.forget(sessionId);
  try {
    await live.session.close();
  } finally {
    if (live.record.uploaded && live.record.workspaceHostPath) {
      await rm(live.record.workspaceHostPath, { recursive: true, force: true });
    }
    await ctx.records.delete(sessionId);
    ctx.pendingRw.delete(sessionId);
    ctx.networkSlots.release(sessionId);
    ctx.audit.write({
      kind: "session",
      event: "closed",
      tenant: live.record.tenant,
      session: sessionId,
      reason,
    });
    // The session's stream ends here: a signed checkpoint seals it (src/server/audit.ts).
    ctx.audit.endSession?.(live.record.tenant, sessionId);
  }
}

/**
 * Closes sessions idle longer than their tenant's idleTtlMs or older than maxLifetimeMs; resolves
 * the ids it closed.
 */
export async function reapSessions(
  ctx: CloseContext & Pick<SessionContext, "config" | "now">,
): Promise<string[]> {
  const now = ctx.now();
  const due: [string, string][] = [];
  for (const live of ctx.registry.all()) {
    const tenant = tenantOf(ctx.config, live.record.tenant);
    if (!tenant || live.closing) continue;
    if (now >= Date.parse(live.record.expiresAt)) due.push([live.record.id, "max-lifetime"]);
    else if (live.running.size === 0 && now - live.lastActiveMs >= tenant.idleTtlMs) {
      due.push([live.record.id, "idle"]);
    }
  }
  await Promise.all(due.map(([id, reason]) => closeSession(ctx, id, reason).catch(() => undefined)));
  return due.map(([id]) => id);
}

/** Closes every live session (shutdown with onExit "close"). */
export async function closeAllSessions(ctx: CloseContext, reason: string): Promise<void> {
  await Promise.all(ctx.registry.all().map((l) => closeSession(ctx, l.record.id, reason)));
}
