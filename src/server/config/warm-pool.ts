/** What the server's warm pool derives from the configuration: its keys' policy identity and its labels' lifetime. */

import { createHash } from "node:crypto";
import type { ServerConfig } from "./types.js";

/**
 * The identity of each tenant's policy for the warm pool key, by tenant id: a digest of its layer
 * files' paths, "" for a tenant without one. The server loads each policy once at start
 * (policy-hooks.ts) and a pool lives in one server process, so the paths identify the policy its
 * sessions run under.
 */
export function tenantPolicyHashes(config: ServerConfig): Map<string, string> {
  return new Map(
    config.tenants.map((t) => [
      t.id,
      t.policy.length === 0 ? "" : createHash("sha256").update(JSON.stringify(t.policy)).digest("hex"),
    ]),
  );
}

/** Label lifetime of the server's pooled sandboxes: the longest session lifetime plus the pool's idle age. */
export function poolTtlMs(config: ServerConfig): number {
  return Math.max(...config.tenants.map((t) => t.maxLifetimeMs)) + config.warmPool.maxIdleMs;
}
