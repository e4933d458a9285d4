/** The warm pool of pre-started, hardened sandboxes, keyed so a pooled one never skips hardening or a policy. */
export { type PoolKeyParts, poolKey } from "./pool-key.js";
export {
  type CopyWorkspace,
  type PoolClaim,
  type PoolRequest,
  type PoolTemplate,
  poolRequestKeys,
} from "./pool-request.js";
export { type PooledClaims, poolable, pooledClaims } from "./pooled-claims.js";
export {
  nextRefillBackoffMs,
  REFILL_BACKOFF,
  type RefillBackoff,
  retryAfterSecondsOf,
} from "./refill-backoff.js";
export { type TenantPools, tenantPools } from "./tenant-pools.js";
export {
  type ClaimResult,
  type PoolBackend,
  RETRY_SPARE_WITHIN_MS,
  WarmPool,
  type WarmPoolOptions,
} from "./warm-pool.js";
