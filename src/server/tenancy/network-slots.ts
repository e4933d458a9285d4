/**
 * The server's bound on sessions with network egress. Each such session's gateway sits on a
 * network of its own, which the Docker engine takes from its address pools (30 networks on a
 * default engine, shared with everything else on that engine): without a bound, the sessions of
 * one tenant (or of all together) use them up and every other networked session create fails
 * (attack 37 F3). A slot is held from the create's start until the session's close has removed its
 * network; a tenant over its quotas.maxNetworkedSessions is refused 429, the server over its
 * maxNetworkedSessions 503 NO_ROOM, both before anything is created.
 */
import { NoRoomError } from "../../errors.js";
import type { TenantConfig } from "../config/index.js";
import type { ServerMetrics } from "../metrics.js";
import { QuotaExceededError } from "./errors.js";
import { RETRY_AFTER_SECONDS } from "./quotas.js";

/** Retry-After of a server-wide refusal, in seconds: a networked session must close first. */
const NETWORK_SLOTS_RETRY_AFTER_SECONDS = 10;

/** Networked-session slots by session id, counted per tenant and server-wide. */
export class NetworkSlots {
  /** Session id → tenant id, for every slot held. */
  private readonly held = new Map<string, string>();

  /** `serverMax`: the server's maxNetworkedSessions. */
  constructor(
    private readonly serverMax: number,
    private readonly metrics: Pick<ServerMetrics, "rateLimited">,
  ) {}

  /**
   * Takes a slot for session `sessionId` of `tenant`, synchronously. QuotaExceededError (429,
   * Retry-After) when the tenant holds its quotas.maxNetworkedSessions; NoRoomError (503 NO_ROOM,
   * Retry-After) when the server holds maxNetworkedSessions. Both name the bound and the fix.
   */
  take(tenant: TenantConfig, sessionId: string): void {
    const max = tenant.quotas.maxNetworkedSessions;
    if (this.count(tenant.id) >= max) {
      this.metrics.rateLimited.inc({ tenant: tenant.id, quota: "maxNetworkedSessions" });
      throw new QuotaExceededError(
        `Tenant '${tenant.id}' has ${max} sessions with network egress (its quotas.maxNetworkedSessions); ` +
          "close one first, or create the session without network.",
        RETRY_AFTER_SECONDS,
      );
    }
    if (this.held.size >= this.serverMax) {
      const err = new NoRoomError(
        `The server has ${this.serverMax} sessions with network egress (its maxNetworkedSessions): each takes one network ` +
          "from the Docker engine's address pools, so no more are started. Create the session without network, or raise " +
          "maxNetworkedSessions together with the engine's pools (default-address-pools in daemon.json).",
      );
      err.retryAfterSeconds = NETWORK_SLOTS_RETRY_AFTER_SECONDS;
      throw err;
    }
    this.held.set(sessionId, tenant.id);
  }

  /** Records the slot of an adopted session (after a restart): its network exists, whatever the bound. */
  adopt(tenant: string, sessionId: string): void {
    this.held.set(sessionId, tenant);
  }

  /** Gives back the slot of `sessionId` (idempotent; no slot: nothing). */
  release(sessionId: string): void {
    this.held.delete(sessionId);
  }

  /** Slots held by `tenant`, or by every tenant when omitted. */
  count(tenant?: string): number {
    if (tenant === undefined) return this.held.size;
    let n = 0;
    for (const t of this.held.values()) if (t === tenant) n++;
    return n;
  }
}
