/**
 * The session options the server gives a session it creates or adopts: its tenant and owner, the
 * tenant's hooks, and its sandbox's lifetime and (when the session asked for domains) network.
 */
import type { SessionOptions } from "../../session/index.js";
import { networkAuditHooks, type TenantConfig, tenantSessionNetwork } from "../config/index.js";
import type { SessionContext } from "./context.js";
import { linkedAuditLog } from "./running-calls.js";

/** What sessionOptions works with. */
export type SessionOptionsContext = Pick<
  SessionContext,
  "config" | "approvals" | "audit" | "metrics" | "hooks" | "controllerId"
> &
  Partial<Pick<SessionContext, "calls">>;

/**
 * Session options with the tenant's hooks and a sandbox spec of the tenant's lifetime and, when the
 * session asked for domains (`networkAllow`), its network (networkOptions), for create and adopt. InvalidArgumentError
 * when that request is not within the tenant's bound.
 */
export async function sessionOptions(
  ctx: SessionOptionsContext,
  tenant: TenantConfig,
  sessionId: string,
  networkAllow?: string[],
): Promise<SessionOptions> {
  const hooks = ctx.hooks ? await ctx.hooks({ tenant, sessionId, approvals: ctx.approvals }) : {};
  return {
    sessionId,
    tenant: tenant.id,
    controllerId: ctx.controllerId,
    ...hooks,
    sandbox: { ttlMs: tenant.maxLifetimeMs, ...(await networkOptions(ctx, tenant, sessionId, networkAllow)) },
  };
}

/**
 * The session's `network` option (config/network.ts): audit line and counter per connection;
 * `ask` connections wait in the HTTP approvals (GET /v1/approvals), config.approvalTimeoutMs.
 */
async function networkOptions(
  ctx: SessionOptionsContext,
  tenant: TenantConfig,
  sessionId: string,
  requested: string[] | undefined,
) {
  const ask = { provider: ctx.approvals.provider, timeoutMs: ctx.config.approvalTimeoutMs };
  const { metrics, config } = ctx;
  // Egress and secret records name the call running when their connection started (running-calls.ts).
  const log = ctx.calls ? linkedAuditLog(ctx.audit, ctx.calls, sessionId) : ctx.audit;
  const count = (decision: string, n: number) =>
    metrics.egressConnections.inc({ tenant: tenant.id, decision }, n);
  const audit = networkAuditHooks(log, count, tenant.id, sessionId, config.networkAuditLimit);
  const network = await tenantSessionNetwork(tenant, requested, audit, ask);
  return network ? { network } : {};
}
