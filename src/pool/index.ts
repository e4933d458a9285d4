/** The warm pool of pre-started, hardened sandboxes, keyed so a pooled one never skips hardening or a policy. */
export {
  type CopyWorkspace,
  type DockerPoolOptions,
  dockerPoolBackend,
  POOL_LABEL,
  type PoolClaim,
  type PoolRequest,
  type PoolTemplate,
} from "./docker-backend.js";
export { type PoolKeyParts, poolKey } from "./pool-key.js";
export { type TenantPools, tenantPools } from "./tenant-pools.js";
export { type ClaimResult, type PoolBackend, WarmPool, type WarmPoolOptions } from "./warm-pool.js";
