/**
 * The spill caps of `warden serve`'s sessions: each session's own (quotas.spillSessionBytes) and one
 * budget per tenant shared by all its live sessions (quotas.spillBytes), so no tenant can fill the
 * host disk under stateDir/spill through cut outputs (src/session/spill-budget.ts does the counting).
 */

import { type SessionOptions, SpillBudget } from "../../session/index.js";
import type { ServerConfig } from "../config/index.js";

/** The spill fields of a session's options. */
export type SpillSessionOptions = Pick<SessionOptions, "spillMaxBytes" | "spillMaxBytesHint" | "spillShared">;

/**
 * Returns the spill options for a session of `tenant`; the tenant budgets live as long as the
 * returned function (one server). A tenant missing from `config` gets no options (session defaults).
 */
export function tenantSpillOptions(config: ServerConfig): (tenant: string) => SpillSessionOptions {
  const budgets = new Map<string, SpillBudget>();
  return (tenantId) => {
    const tenant = config.tenants.find((t) => t.id === tenantId);
    if (!tenant) return {};
    let shared = budgets.get(tenantId);
    if (!shared) {
      shared = new SpillBudget(
        "tenant",
        tenant.quotas.spillBytes,
        `quotas.spillBytes of tenant '${tenantId}' in the server config`,
      );
      budgets.set(tenantId, shared);
    }
    return {
      spillMaxBytes: tenant.quotas.spillSessionBytes,
      spillMaxBytesHint: `quotas.spillSessionBytes of tenant '${tenantId}' in the server config`,
      spillShared: shared,
    };
  };
}
