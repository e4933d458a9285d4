/** The `warden serve` configuration: its resolved types, defaults, loading, and what sessions derive from it. */

export { defaultReplicaId, SERVE_PREFIX, serverControllerId } from "./controller-id.js";
export {
  CONFIG_DEFAULTS,
  DEFAULT_MAX_CONCURRENT_TOOL_CALLS,
  DEFAULT_MAX_CONCURRENT_WORKSPACE_READS,
  DEFAULT_TAR_MAX_ENTRIES,
} from "./defaults.js";
export { loadServerConfig } from "./load.js";
export { networkAuditHooks, resolveTenantNetwork, sessionNetwork, tenantSessionNetwork } from "./network.js";
export { resolveServerConfig } from "./resolve.js";
export { type SecretsConfig, type ServerConfig, type TenantConfig, tenantOf } from "./types.js";
export { poolTtlMs, tenantPolicyHashes } from "./warm-pool.js";
