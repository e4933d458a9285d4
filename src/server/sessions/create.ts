/**
 * How a session enters the registry: created within the tenant's quotas (maxSessions, networked
 * sessions, a host workspace no live rw workspace overlaps), or adopted after a restart. Every
 * created session has a record file from creation until its container is gone, so a crash at any
 * point is repaired by `reconcile`.
 */
import { randomUUID } from "node:crypto";
import type { SessionOptions } from "../../session/index.js";
import type { TenantConfig } from "../config/index.js";
import { QuotaExceededError, RETRY_AFTER_SECONDS } from "../tenancy/index.js";
import type { SessionContext } from "./context.js";
import { sessionOptions } from "./options.js";
import { processRecordWriter } from "./process-records.js";
import type { SessionRecord } from "./record-store.js";
import type { LiveSession } from "./registry.js";
import type { ResolvedSessionRequest } from "./request.js";

/**
 * Reserves one of the tenant's maxSessions slots, e.g. before an upload is unpacked for the
 * session. QuotaExceededError (429) when none is free. The returned release is idempotent.
 */
export function reserveSession(
  ctx: Pick<SessionContext, "registry" | "metrics">,
  tenant: TenantConfig,
): () => void {
  const release = ctx.registry.reserve(tenant.id, tenant.quotas.maxSessions);
  if (!release) {
    ctx.metrics.rateLimited.inc({ tenant: tenant.id, quota: "maxSessions" });
    throw new QuotaExceededError(
      `Tenant '${tenant.id}' has ${tenant.quotas.maxSessions} live sessions (its maxSessions); close one first.`,
      RETRY_AFTER_SECONDS,
    );
  }
  return release;
}

/**
 * Creates a session in a slot `reserved` by reserveSession (released here), or in one reserved
 * now: QuotaExceededError (429) when the tenant has maxSessions live. A session with network
 * egress also takes a networked slot (network-slots.ts: 429 over the tenant's, 503 over the
 * server's maxNetworkedSessions) before anything is created, held until its close ends.
 */
export async function createSession(
  ctx: SessionContext,
  tenant: TenantConfig,
  request: ResolvedSessionRequest,
  reserved?: () => void,
): Promise<LiveSession> {
  const release = reserved ?? reserveSession(ctx, tenant);
  const id = randomUUID();
  let created = false;
  try {
    if (request.networkAllow?.length) ctx.networkSlots.take(tenant, id);
    const base = await sessionOptions(ctx, tenant, id, request.networkAllow, {
      requested: request.secrets ?? [],
      mustExist: true,
    });
    let record: SessionRecord | undefined;
    const options: SessionOptions = {
      ...base,
      processes: {
        onRecordsChanged: processRecordWriter({ record: () => record, put: (r) => ctx.records.put(r) }),
      },
      sandbox: {
        ...base.sandbox,
        image: request.image,
        limits: request.limits,
        ...(request.workspaceHostPath
          ? { workspace: { hostPath: request.workspaceHostPath, mode: request.workspaceMode } }
          : {}),
      },
      ...(request.tools ? { toolSelection: request.tools } : {}),
      ...(request.env ? { env: request.env } : {}),
    };
    const create = () => ctx.sessions.create(options);
    const hostPath = request.uploaded ? undefined : request.workspaceHostPath;
    // An rw workspace counts as live from now on: its sandbox may run before it is registered.
    if (hostPath && request.workspaceMode === "rw") ctx.pendingRw.set(id, hostPath);
    const session = hostPath
      ? await ctx.hostWorkspaces.run(hostPath, request.workspaceMode, () => liveRwWorkspaces(ctx), create)
      : await create();
    const createdMs = ctx.now();
    record = {
      version: 1,
      id,
      tenant: tenant.id,
      containerId: session.sandbox.info.containerId,
      image: request.image,
      workspaceMode: request.workspaceMode,
      ...(request.workspaceHostPath ? { workspaceHostPath: request.workspaceHostPath } : {}),
      ...(request.uploaded ? { uploaded: true } : {}),
      limits: request.limits,
      ...(request.tools ? { toolSelection: request.tools } : {}),
      ...(request.env ? { env: request.env } : {}),
      ...(request.networkAllow?.length ? { networkAllow: request.networkAllow } : {}),
      ...(request.secrets?.length ? { secrets: request.secrets } : {}),
      createdAt: new Date(createdMs).toISOString(),
      expiresAt: new Date(createdMs + tenant.maxLifetimeMs).toISOString(),
      ...(session.processes?.records().length ? { processes: session.processes.records() } : {}),
    };
    try {
      await ctx.records.put(record);
    } catch (err) {
      await session.close();
      throw err;
    }
    const live: LiveSession = {
      record,
      session,
      lastActiveMs: createdMs,
      running: new Set(),
      closing: false,
    };
    ctx.registry.add(live);
    ctx.metrics.sessions.inc({ tenant: tenant.id });
    ctx.audit.write({ kind: "session", event: "created", tenant: tenant.id, session: id });
    created = true;
    return live;
  } finally {
    if (!created) ctx.networkSlots.release(id);
    ctx.pendingRw.delete(id);
    release();
  }
}

/** Adds an adopted session (after a restart) to the registry, with its networked slot. */
export function addAdopted(
  ctx: Pick<SessionContext, "registry" | "networkSlots" | "metrics">,
  live: LiveSession,
): void {
  if (live.record.networkAllow?.length) ctx.networkSlots.adopt(live.record.tenant, live.record.id);
  ctx.registry.add(live);
  ctx.metrics.sessions.inc({ tenant: live.record.tenant });
}

/** Host directories that live (or being created or closed) sessions of any tenant mount read-write (canonical). */
function liveRwWorkspaces(ctx: Pick<SessionContext, "registry" | "pendingRw">): string[] {
  const live = ctx.registry
    .all()
    .filter((l) => l.record.workspaceMode === "rw" && l.record.workspaceHostPath !== undefined)
    .map((l) => l.record.workspaceHostPath!);
  return [...live, ...ctx.pendingRw.values()];
}
