/**
 * The server's live sessions, keyed by id and owned by a tenant. Every lookup names the tenant, and
 * a session of another tenant is reported exactly like one that does not exist (NotFoundError, 404),
 * so ids cannot be enumerated across tenants.
 */
import { NotFoundError } from "../../errors.js";
import type { Session } from "../../session/index.js";
import type { SessionRecord } from "./record-store.js";

/** One live session and its bookkeeping. Times are epoch ms. */
export interface LiveSession {
  record: SessionRecord;
  session: Session;
  lastActiveMs: number;
  /** Aborts the session's running batches (client disconnect, shutdown, reaping). */
  readonly running: Set<AbortController>;
  closing: boolean;
}

/** Live sessions plus per-tenant reservations for sessions being created. */
export class SessionRegistry {
  private readonly sessions = new Map<string, LiveSession>();
  private readonly pending = new Map<string, number>();
  private readonly removedListeners = new Set<(live: LiveSession) => void>();

  /**
   * Calls `listener` with every session removed from now on (closed for any reason: DELETE, idle,
   * lifetime, shutdown), synchronously as it is removed. Returns the function that unsubscribes.
   */
  onRemoved(listener: (live: LiveSession) => void): () => void {
    this.removedListeners.add(listener);
    return () => this.removedListeners.delete(listener);
  }

  /** Adds a live session. */
  add(live: LiveSession): void {
    this.sessions.set(live.record.id, live);
  }

  /** Removes a session (no error when absent). */
  remove(id: string): LiveSession | undefined {
    const live = this.sessions.get(id);
    this.sessions.delete(id);
    if (live) for (const listener of this.removedListeners) listener(live);
    return live;
  }

  /** The tenant's session `id`; NotFoundError when absent, closing, or owned by another tenant. */
  get(tenant: string, id: string): LiveSession {
    const live = this.sessions.get(id);
    if (!live || live.record.tenant !== tenant || live.closing) {
      throw new NotFoundError(`Session '${id}' not found. List your sessions with GET /v1/sessions.`);
    }
    return live;
  }

  /** The tenant's sessions, oldest first. */
  list(tenant: string): LiveSession[] {
    return [...this.sessions.values()]
      .filter((s) => s.record.tenant === tenant && !s.closing)
      .sort((a, b) => a.record.createdAt.localeCompare(b.record.createdAt));
  }

  /** Every live session of every tenant. */
  all(): LiveSession[] {
    return [...this.sessions.values()];
  }

  /** Live plus reserved sessions of a tenant. */
  count(tenant: string): number {
    return this.list(tenant).length + (this.pending.get(tenant) ?? 0);
  }

  /**
   * Reserves a slot for a session being created when the tenant is under `max`; returns a release
   * function, or null when the tenant is at its quota.
   */
  reserve(tenant: string, max: number): (() => void) | null {
    if (this.count(tenant) >= max) return null;
    this.pending.set(tenant, (this.pending.get(tenant) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.pending.set(tenant, (this.pending.get(tenant) ?? 1) - 1);
    };
  }

  /** Live sessions by the exec path of their sandbox (warden_sessions_by_exec_path). */
  execPaths(): Record<"channel" | "docker-exec", number> {
    const counts = { channel: 0, "docker-exec": 0 };
    for (const live of this.sessions.values()) counts[live.session.sandbox.info.execPath ?? "docker-exec"]++;
    return counts;
  }

  /** Number of batches running now. */
  runningBatches(): number {
    return this.all().reduce((n, live) => n + live.running.size, 0);
  }

  /** Aborts every running batch (shutdown after the grace period). Returns how many were aborted. */
  abortAll(): number {
    const running = this.all().flatMap((live) => [...live.running]);
    for (const c of running) c.abort();
    return running.length;
  }
}
