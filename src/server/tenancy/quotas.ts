/**
 * A tenant's concurrency quotas on the server: tool calls running (quotas.maxConcurrentToolCalls)
 * and workspace exports or reviews running (quotas.maxConcurrentWorkspaceReads). A slot is taken
 * synchronously and its release is idempotent; a refusal is a QuotaExceededError (429, Retry-After)
 * naming the quota, counted in warden_rate_limited_total.
 */
import type { TenantConfig } from "../config/index.js";
import type { ServerMetrics } from "../metrics.js";
import { QuotaExceededError } from "./errors.js";

/** Seconds a client should wait before retrying a refused batch, read or session. */
export const RETRY_AFTER_SECONDS = 1;

/** Counts a tenant's slots in use (tool calls, workspace reads) against a maximum. */
class CallLimiter {
  private readonly running = new Map<string, number>();

  /** Takes `n` call slots; returns a release function, or null when that would exceed `max`. */
  acquire(tenant: string, n: number, max: number): (() => void) | null {
    const now = this.running.get(tenant) ?? 0;
    if (now + n > max) return null;
    this.running.set(tenant, now + n);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running.set(tenant, (this.running.get(tenant) ?? n) - n);
    };
  }

  /** Calls now running for a tenant. */
  inFlight(tenant: string): number {
    return this.running.get(tenant) ?? 0;
  }
}

/** The call and workspace-read slots of every tenant. */
export class TenantQuotas {
  private readonly calls = new CallLimiter();
  private readonly workspaceReads = new CallLimiter();

  constructor(private readonly metrics: Pick<ServerMetrics, "rateLimited">) {}

  /**
   * Takes `n` of the tenant's maxConcurrentToolCalls slots for a batch; returns its release.
   * QuotaExceededError (429) when the running calls plus `n` would exceed the quota.
   */
  reserveCalls(tenant: TenantConfig, n: number): () => void {
    const max = tenant.quotas.maxConcurrentToolCalls;
    const release = this.calls.acquire(tenant.id, n, max);
    if (release) return release;
    this.metrics.rateLimited.inc({ tenant: tenant.id, quota: "maxConcurrentToolCalls" });
    throw new QuotaExceededError(
      `Tenant '${tenant.id}' would have ${this.calls.inFlight(tenant.id) + n} tool calls running, ` +
        `over its maxConcurrentToolCalls ${max}; retry after the running calls finish.`,
      RETRY_AFTER_SECONDS,
    );
  }

  /**
   * Takes one of the tenant's maxConcurrentWorkspaceReads slots for a workspace export or review;
   * returns its release. QuotaExceededError (429) when none is free.
   */
  reserveWorkspaceRead(tenant: TenantConfig): () => void {
    const max = tenant.quotas.maxConcurrentWorkspaceReads;
    const release = this.workspaceReads.acquire(tenant.id, 1, max);
    if (release) return release;
    this.metrics.rateLimited.inc({ tenant: tenant.id, quota: "maxConcurrentWorkspaceReads" });
    throw new QuotaExceededError(
      `Tenant '${tenant.id}' has ${max} workspace exports or reviews running (its maxConcurrentWorkspaceReads); ` +
        "retry after one finishes.",
      RETRY_AFTER_SECONDS,
    );
  }

  /** Tool calls of the tenant running now. */
  callsInFlight(tenant: string): number {
    return this.calls.inFlight(tenant);
  }

  /** Workspace exports or reviews of the tenant running now. */
  workspaceReadsInFlight(tenant: string): number {
    return this.workspaceReads.inFlight(tenant);
  }
}
