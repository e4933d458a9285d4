/** A tenant's access and bounds on the server: its API keys, its quotas and networked slots, its spill bytes. */

export { hashKey, KeyRing, type Principal } from "./auth.js";
export { QuotaExceededError, UnauthorizedError } from "./errors.js";
export { NetworkSlots } from "./network-slots.js";
export { RETRY_AFTER_SECONDS, TenantQuotas } from "./quotas.js";
export { tenantSpillOptions } from "./spill-quota.js";
