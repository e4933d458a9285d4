/**
 * One WarmPool per tenant, made on first use, so a pool's `maxKeys` bound applies per tenant: one
 * tenant churning keys (say, every memory limit in turn) evicts only its own spares (red team).
 */
import { type PoolBackend, WarmPool, type WarmPoolOptions } from "./warm-pool.js";

/** The pools of every tenant. */
export interface TenantPools<Req, P> {
  /** The tenant's pool; undefined once drained. */
  of(tenant: string): WarmPool<Req, P> | undefined;
  /** Idle entries across all tenants. */
  idle(): number;
  /** Keys across all tenants whose spares found no room and which now back off (WarmPool stats' backoffMs). */
  backingOff(): number;
  /** Drains every pool; later `of` calls return undefined. */
  drain(): Promise<void>;
}

/**
 * Pools made with `options`, one WarmPool each: on the same backend, or, when `backend` is a
 * function, on the backend it returns for the tenant (called once per tenant; the Kubernetes
 * server's tenants may each have their own namespace).
 */
export function tenantPools<Req, P>(
  options: Omit<WarmPoolOptions<Req, P>, "backend"> & {
    backend: PoolBackend<Req, P> | ((tenant: string) => PoolBackend<Req, P>);
  },
): TenantPools<Req, P> {
  const pools = new Map<string, WarmPool<Req, P>>();
  let drained = false;
  return {
    of(tenant) {
      if (drained) return undefined;
      let pool = pools.get(tenant);
      if (!pool) {
        const { backend } = options;
        pool = new WarmPool({
          ...options,
          backend: typeof backend === "function" ? backend(tenant) : backend,
        });
        pools.set(tenant, pool);
      }
      return pool;
    },
    idle: () => [...pools.values()].flatMap((p) => p.stats()).reduce((sum, key) => sum + key.idle, 0),
    backingOff: () =>
      [...pools.values()].flatMap((p) => p.stats()).filter((key) => key.backoffMs !== undefined).length,
    async drain() {
      drained = true;
      await Promise.all([...pools.values()].map((p) => p.drain()));
    },
  };
}
