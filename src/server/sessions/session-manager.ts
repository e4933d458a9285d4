/**
 * The server's sessions: create (within quotas), look up (tenant-scoped), run tool-call batches
 * (within the tenant's concurrency quota, abortable), close. Every session has a record file from
 * creation until its container is gone, so a crash at any point is repaired by `reconcile`.
 */

import { randomUUID } from "node:crypto";
import { rm } from "node:fs/promises";
import type { ToolExecutionEvent } from "../../pipeline/index.js";
import type { SessionOptions } from "../../session/index.js";
import type { ToolCall, ToolResultMessage } from "../../tools/index.js";
import { onAbort } from "../../util/index.js";
import type { AuditLog } from "../audit.js";
import {
  networkAuditHooks,
  type ServerConfig,
  serverControllerId,
  type TenantConfig,
  tenantSessionNetwork,
} from "../config/index.js";
import { QuotaExceededError } from "../http/errors.js";
import type { ServerMetrics } from "../metrics.js";
import { NetworkSlots } from "../tenancy/network-slots.js";
import { type BatchRunOptions, RETRY_AFTER_SECONDS, TenantQuotas } from "../tenancy/quotas.js";
import type { ApprovalBroker } from "./approval-broker.js";
import type { SessionBackend } from "./backend.js";
import { HostWorkspaceGuard } from "./host-workspace-guard.js";
import type { InflightCalls } from "./inflight-calls.js";
import type { HookFactory } from "./policy-hooks.js";
import type { RecordStore, SessionRecord } from "./record-store.js";
import { type LiveSession, SessionRegistry } from "./registry.js";
import type { ResolvedSessionRequest } from "./request.js";
import { recordFinishedCall } from "./tool-audit.js";

/** The event that ends one call (its result and the decision reported for it). */
type ToolEndEvent = Extract<ToolExecutionEvent, { type: "tool_execution_end" }>;

/** Everything the manager works with. `now` is epoch ms (injectable for tests). */
export interface SessionManagerDeps {
  config: ServerConfig;
  backend: SessionBackend;
  records: RecordStore;
  audit: AuditLog;
  metrics: ServerMetrics;
  approvals: ApprovalBroker;
  /** Journal of running batches, for the `interrupted` audit lines after a crash. */
  inflight?: InflightCalls;
  hooks?: HookFactory;
  now?: () => number;
}

/**
 * Owns the live sessions of every tenant. Its registry, quotas and dependencies are its own: routes
 * and start-up reach sessions through the narrow methods below.
 */
export class SessionManager {
  private readonly registry = new SessionRegistry();
  private readonly quotas: TenantQuotas;
  private readonly networkSlots: NetworkSlots;
  private readonly hostWorkspaces = new HostWorkspaceGuard();
  /** rw host workspaces of sessions being created or closed, by session id (see liveRwWorkspaces). */
  private readonly pendingRw = new Map<string, string>();
  private readonly now: () => number;

  /** Owner id on this server's sandboxes (see serverControllerId). */
  readonly controllerId: string;

  constructor(private readonly deps: SessionManagerDeps) {
    this.now = deps.now ?? Date.now;
    this.quotas = new TenantQuotas(deps.metrics);
    this.networkSlots = new NetworkSlots(deps.config.maxNetworkedSessions, deps.metrics);
    this.controllerId = serverControllerId(deps.config.stateDir, deps.config.backend);
  }

  /** The tenant with this id (configured tenants only). */
  tenant(id: string): TenantConfig | undefined {
    return this.deps.config.tenants.find((t) => t.id === id);
  }

  /** The tenant's live session `id`; NotFoundError (404) for an unknown id or another tenant's session. */
  get(tenant: string, id: string): LiveSession {
    return this.registry.get(tenant, id);
  }

  /** The tenant's live sessions. */
  list(tenant: string): LiveSession[] {
    return this.registry.list(tenant);
  }

  /** A snapshot of every tenant's live sessions. */
  all(): LiveSession[] {
    return this.registry.all();
  }

  /** Calls `listener` as each session starts closing (any reason); returns the unsubscribe function. */
  onSessionClosing(listener: (live: LiveSession) => void): () => void {
    return this.registry.onRemoved(listener);
  }

  /** The warm pool: spare sandboxes waiting, keys backing off as no node takes their spares (0s without). */
  poolState(): { idle: number; backoffKeys: number } {
    const { backend } = this.deps;
    return { idle: backend.idleSpares?.() ?? 0, backoffKeys: backend.poolBackoffKeys?.() ?? 0 };
  }

  /**
   * Session options with the tenant's hooks and, when the session asked for domains
   * (`networkAllow`), its network (networkOptions), for create and adopt. InvalidArgumentError
   * when that request is not within the tenant's bound.
   */
  async sessionOptions(
    tenant: TenantConfig,
    sessionId: string,
    networkAllow?: string[],
  ): Promise<SessionOptions> {
    const hooks = this.deps.hooks
      ? await this.deps.hooks({ tenant, sessionId, approvals: this.deps.approvals })
      : {};
    return {
      sessionId,
      tenant: tenant.id,
      ttlMs: tenant.maxLifetimeMs,
      controllerId: this.controllerId,
      ...hooks,
      ...(await this.networkOptions(tenant, sessionId, networkAllow)),
    };
  }

  /**
   * The session's `network` option (network-config.ts): audit line and counter per connection;
   * `ask` connections wait in the HTTP approvals (GET /v1/approvals), config.approvalTimeoutMs.
   */
  private async networkOptions(tenant: TenantConfig, sessionId: string, requested: string[] | undefined) {
    const ask = { provider: this.deps.approvals.provider, timeoutMs: this.deps.config.approvalTimeoutMs };
    const { metrics, audit: log, config } = this.deps;
    const count = (decision: string, n: number) =>
      metrics.egressConnections.inc({ tenant: tenant.id, decision }, n);
    const audit = networkAuditHooks(log, count, tenant.id, sessionId, config.networkAuditLimit);
    const network = await tenantSessionNetwork(tenant, requested, audit, ask);
    return network ? { network } : {};
  }

  /**
   * Reserves one of the tenant's maxSessions slots, e.g. before an upload is unpacked for the
   * session. QuotaExceededError (429) when none is free. The returned release is idempotent.
   */
  reserveSession(tenant: TenantConfig): () => void {
    const release = this.registry.reserve(tenant.id, tenant.quotas.maxSessions);
    if (!release) {
      this.deps.metrics.rateLimited.inc({ tenant: tenant.id, quota: "maxSessions" });
      throw new QuotaExceededError(
        `Tenant '${tenant.id}' has ${tenant.quotas.maxSessions} live sessions (its maxSessions); close one first.`,
        RETRY_AFTER_SECONDS,
      );
    }
    return release;
  }

  /** Takes `n` of the tenant's tool-call slots up front (a stream's 429 before it starts); see TenantQuotas. */
  reserveCalls(tenant: TenantConfig, n: number): () => void {
    return this.quotas.reserveCalls(tenant, n);
  }

  /** Takes one of the tenant's workspace-read slots (export, review); see TenantQuotas. */
  reserveWorkspaceRead(tenant: TenantConfig): () => void {
    return this.quotas.reserveWorkspaceRead(tenant);
  }

  /** Tool calls of the tenant running now. */
  callsInFlight(tenant: string): number {
    return this.quotas.callsInFlight(tenant);
  }

  /** Workspace exports or reviews of the tenant running now. */
  workspaceReadsInFlight(tenant: string): number {
    return this.quotas.workspaceReadsInFlight(tenant);
  }

  /**
   * Creates a session in a slot `reserved` by reserveSession (released here), or in one reserved
   * now: QuotaExceededError (429) when the tenant has maxSessions live. A session with network
   * egress also takes a networked slot (network-slots.ts: 429 over the tenant's, 503 over the
   * server's maxNetworkedSessions) before anything is created, held until its close ends.
   */
  async create(
    tenant: TenantConfig,
    request: ResolvedSessionRequest,
    reserved?: () => void,
  ): Promise<LiveSession> {
    const release = reserved ?? this.reserveSession(tenant);
    const id = randomUUID();
    let created = false;
    try {
      if (request.networkAllow?.length) this.networkSlots.take(tenant, id);
      const options: SessionOptions = {
        ...(await this.sessionOptions(tenant, id, request.networkAllow)),
        image: request.image,
        limits: request.limits,
        ...(request.workspaceHostPath
          ? { workspace: { hostPath: request.workspaceHostPath, mode: request.workspaceMode } }
          : {}),
        ...(request.tools ? { toolSelection: request.tools } : {}),
        ...(request.env ? { env: request.env } : {}),
      };
      const create = () => this.deps.backend.create(options);
      const hostPath = request.uploaded ? undefined : request.workspaceHostPath;
      // An rw workspace counts as live from now on: its sandbox may run before it is registered.
      if (hostPath && request.workspaceMode === "rw") this.pendingRw.set(id, hostPath);
      const session = hostPath
        ? await this.hostWorkspaces.run(
            hostPath,
            request.workspaceMode,
            () => this.liveRwWorkspaces(),
            create,
          )
        : await create();
      const createdMs = this.now();
      const record: SessionRecord = {
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
        createdAt: new Date(createdMs).toISOString(),
        expiresAt: new Date(createdMs + tenant.maxLifetimeMs).toISOString(),
      };
      try {
        await this.deps.records.put(record);
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
      this.registry.add(live);
      this.deps.metrics.sessions.inc({ tenant: tenant.id });
      this.deps.audit.write({ kind: "session", event: "created", tenant: tenant.id, session: id });
      created = true;
      return live;
    } finally {
      if (!created) this.networkSlots.release(id);
      this.pendingRw.delete(id);
      release();
    }
  }

  /** Host directories that live (or being created or closed) sessions of any tenant mount read-write (canonical). */
  private liveRwWorkspaces(): string[] {
    const live = this.registry
      .all()
      .filter((l) => l.record.workspaceMode === "rw" && l.record.workspaceHostPath !== undefined)
      .map((l) => l.record.workspaceHostPath!);
    return [...live, ...this.pendingRw.values()];
  }

  /** Live sessions by the exec path of their sandbox (warden_sessions_by_exec_path). */
  execPaths(): Record<"channel" | "docker-exec", number> {
    const counts = { channel: 0, "docker-exec": 0 };
    for (const live of this.registry.all()) counts[live.session.sandbox.info.execPath ?? "docker-exec"]++;
    return counts;
  }

  /** Adds an adopted session (after a restart) to the registry. */
  addAdopted(live: LiveSession): void {
    if (live.record.networkAllow?.length) this.networkSlots.adopt(live.record.tenant, live.record.id);
    this.registry.add(live);
    this.deps.metrics.sessions.inc({ tenant: live.record.tenant });
  }

  /**
   * Runs one batch in the tenant's session. QuotaExceededError (429) when the tenant's running calls
   * plus this batch exceed maxConcurrentToolCalls; NotFoundError (404) for a session not its own.
   * `options` (BatchRunOptions): its abort signal, its events, and when its slots are given back.
   */
  async runToolCalls(
    tenant: TenantConfig,
    sessionId: string,
    calls: ToolCall[],
    options: BatchRunOptions = {},
  ): Promise<ToolResultMessage[]> {
    const live = this.registry.get(tenant.id, sessionId);
    const release = this.quotas.reserveCalls(tenant, calls.length);
    const controller = new AbortController();
    const unlink = onAbort(options.signal, () => controller.abort());
    live.running.add(controller);
    live.lastActiveMs = this.now();
    const started = new Map<string, number>();
    // The batch's own id keys its calls in the audit log (their ids are the client's, unique only within it).
    const batchId = randomUUID();
    let journalled: (() => Promise<void>) | undefined;
    try {
      const batch = {
        tenant: tenant.id,
        session: sessionId,
        batch: batchId,
        calls: calls.map(({ id, name }) => ({ id, name })),
      };
      journalled = await this.deps.inflight?.begin(batch);
      return await live.session.runToolCalls(calls, {
        signal: controller.signal,
        onEvent: (event) => {
          if (event.type === "tool_execution_start") started.set(event.toolCallId, this.now());
          if (event.type === "tool_execution_end") this.finishCall(live, batchId, event, started);
          options.onEvent?.(event);
        },
      });
    } finally {
      unlink();
      live.running.delete(controller);
      live.lastActiveMs = this.now();
      if (options.releaseSlots) options.releaseSlots(release);
      else release();
      await journalled?.();
    }
  }

  /** Metrics and the audit line of one finished call (tool-audit.ts recordFinishedCall). */
  private finishCall(live: LiveSession, batch: string, event: ToolEndEvent, started: Map<string, number>) {
    const durationMs = this.now() - (started.get(event.result.toolCallId) ?? this.now());
    recordFinishedCall(
      this.deps,
      { tenant: live.record.tenant, session: live.record.id, batch },
      event,
      durationMs,
    );
  }

  /**
   * Closes a session: aborts its running batches, denies its pending asks, destroys the container,
   * then drops its record. Idempotent; unknown ids are ignored.
   */
  async close(sessionId: string, reason: string): Promise<void> {
    const live = this.registry.remove(sessionId);
    if (!live) return;
    live.closing = true;
    // Its sandbox may run until its container is gone: its rw workspace still counts as live.
    const { workspaceMode, workspaceHostPath } = live.record;
    if (workspaceMode === "rw" && workspaceHostPath) this.pendingRw.set(sessionId, workspaceHostPath);
    for (const c of live.running) c.abort();
    this.deps.metrics.sessions.dec({ tenant: live.record.tenant });
    try {
      await live.session.close();
    } finally {
      if (live.record.uploaded && live.record.workspaceHostPath) {
        await rm(live.record.workspaceHostPath, { recursive: true, force: true });
      }
      await this.deps.records.delete(sessionId);
      this.pendingRw.delete(sessionId);
      this.networkSlots.release(sessionId);
      this.deps.audit.write({
        kind: "session",
        event: "closed",
        tenant: live.record.tenant,
        session: sessionId,
        reason,
      });
    }
  }

  /** Closes sessions idle longer than their tenant's idleTtlMs or older than maxLifetimeMs. */
  async reap(): Promise<string[]> {
    const now = this.now();
    const due: [string, string][] = [];
    for (const live of this.registry.all()) {
      const tenant = this.tenant(live.record.tenant);
      if (!tenant || live.closing) continue;
      if (now >= Date.parse(live.record.expiresAt)) due.push([live.record.id, "max-lifetime"]);
      else if (live.running.size === 0 && now - live.lastActiveMs >= tenant.idleTtlMs) {
        due.push([live.record.id, "idle"]);
      }
    }
    await Promise.all(due.map(([id, reason]) => this.close(id, reason).catch(() => undefined)));
    return due.map(([id]) => id);
  }

  /** Aborts every running batch (shutdown after the grace period). Returns how many were aborted. */
  abortAll(): number {
    const running = this.registry.all().flatMap((live) => [...live.running]);
    for (const c of running) c.abort();
    return running.length;
  }

  /** Closes every live session (shutdown with onExit "close"). */
  async closeAll(reason: string): Promise<void> {
    await Promise.all(this.registry.all().map((l) => this.close(l.record.id, reason)));
  }

  /** Number of batches running now. */
  runningBatches(): number {
    return this.registry.all().reduce((n, live) => n + live.running.size, 0);
  }
}
