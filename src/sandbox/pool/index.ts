/** The warm pool of pre-started, hardened sandboxes, keyed so a pooled one never skips hardening or a policy. */
export { poolKey } from "./pool-key.js";
export {
  type PoolRequest,
  poolRequestKeys,
} from "./pool-request.js";
export { type PooledClaims, pooledClaims } from "./pooled-claims.js";
export {
  nextRefillBackoffMs,
  REFILL_BACKOFF,
  retryAfterSecondsOf,
} from "./refill-backoff.js";
export { tenantPools } from "./tenant-pools.js";
export {
  type ClaimResult,
  type PoolBackend,
  RETRY_SPARE_WITHIN_MS,
  WarmPool,
} from "./warm-pool.js";
