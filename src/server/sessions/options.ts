/**
 * The session options the server gives a session it creates or adopts: its tenant and owner, the
 * tenant's hooks, and its sandbox's lifetime and (when the session asked for domains) network,
 * with the secrets of the tenant's store it asked for.
 */
import type { SessionSecret } from "../../egress/index.js";
import type { SessionOptions } from "../../session/index.js";
import { networkAuditHooks, type TenantConfig, tenantSessionNetwork } from "../config/index.js";
import { type SessionSecretRequest, sessionSecrets } from "../secrets/index.js";
import type { SessionContext } from "./context.js";
import { linkedAuditLog } from "./running-calls.js";

/** What sessionOptions works with. */
export type SessionOptionsContext = Pick<
  SessionContext,
  "config" | "approvals" | "audit" | "metrics" | "hooks" | "controllerId" | "secrets"
> &
  Partial<Pick<SessionContext, "calls">>;

/**
 * The secrets a session asked for: `mustExist` for a new session (a name the tenant's store does
 * not have is a 400), not for an adopted one (a secret deleted meanwhile is refused as revoked).
 */
export interface SessionSecretsChoice {
  requested: readonly SessionSecretRequest[];
  mustExist: boolean;
}

/**
 * Session options with the tenant's hooks and a sandbox spec of the tenant's lifetime and, when the
 * session asked for domains (`networkAllow`), its network (networkOptions) with its `secrets`
 * (sessionSecrets: read from ctx.secrets at each use), for create and adopt. InvalidArgumentError
 * when that request is not within the tenant's bound or names a secret the tenant does not have.
 */
export async function sessionOptions(
  ctx: SessionOptionsContext,
  tenant: TenantConfig,
  sessionId: string,
  networkAllow?: string[],
  secrets?: SessionSecretsChoice,
): Promise<SessionOptions> {
  const secretList = secrets
    ? sessionSecrets(ctx.secrets, tenant.id, secrets.requested, { mustExist: secrets.mustExist })
    : [];
  const hooks = ctx.hooks ? await ctx.hooks({ tenant, sessionId, approvals: ctx.approvals }) : {};
  return {
    sessionId,
    tenant: tenant.id,
    controllerId: ctx.controllerId,
    ...hooks,
    sandbox: {
      ttlMs: tenant.maxLifetimeMs,
      ...(await networkOptions(ctx, tenant, sessionId, networkAllow, secretList)),
    },
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
  secrets: SessionSecret[],
) {
  const ask = { provider: ctx.approvals.provider, timeoutMs: ctx.config.approvalTimeoutMs };
  const { metrics, config } = ctx;
  // Egress and secret records name the call running when their connection started (running-calls.ts).
  const log = ctx.calls ? linkedAuditLog(ctx.audit, ctx.calls, sessionId) : ctx.audit;
  const count = (decision: string, n: number) =>
    metrics.egressConnections.inc({ tenant: tenant.id, decision }, n);
  const audit = networkAuditHooks(log, count, tenant.id, sessionId, config.networkAuditLimit);
  const network = await tenantSessionNetwork(tenant, requested, audit, ask);
  if (network?.mode === "allowlist" && secrets.length > 0) return { network: { ...network, secrets } };
  return network ? { network } : {};
}
