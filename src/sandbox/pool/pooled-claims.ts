/**
 * The `claim` every backend shares: a sandbox from the tenant's warm pool when the spec can be
 * pooled and a pool is configured, else one created cold by the backend. Each backend passes its
 * own pool entries (docker/pool.ts, kubernetes/pool.ts) and its own cold start.
 */
import type { BackendOptions, ClaimOptions, PoolStats } from "../backend.js";
import type { CallOptions, Sandbox, SandboxIdentity, SandboxSpec } from "../types.js";
import { networkedSpareBound } from "./networked-spares.js";
import type { CopyWorkspace, PoolRequest } from "./pool-request.js";
import { tenantPools } from "./tenant-pools.js";
import type { ClaimResult, PoolBackend } from "./warm-pool.js";

/** The pool part of a SandboxBackend: its `claim`, `poolStats` and `close`. */
export interface PooledClaims {
  /** SandboxBackend.claim: pooled (poolable spec, pool on) or cold; counted in onSandboxStart. */
  claim(spec: SandboxSpec, identity: SandboxIdentity, options?: ClaimOptions): Promise<ClaimResult>;
  /** Idle spares and backing-off keys over every tenant (zeros without a pool). */
  poolStats(): PoolStats;
  /** Drains every tenant's pool (its spares are removed); later claims start cold. Idempotent. */
  close(): Promise<void>;
}

/**
 * True for a spec a spare can serve: no workspace or a copy-mode one (a ro/rw spare would
 * bind-mount a host path long after it was checked), and no network egress unless `networked`
 * (warmPool.networked > 0; at most that many such spares at once, networked-spares.ts):
 * the network policy is part of the key (pool-key.ts), and a spare's gateway answers to no
 * session until the claim binds it to the claimer's approver, audit and secrets (EgressGateway.bind).
 */
function poolable(spec: SandboxSpec, networked: boolean): boolean {
  const copyMode = (spec.workspace?.mode ?? "copy") === "copy";
  return copyMode && (networked || (spec.network?.mode ?? "none") === "none");
}

/**
 * Claims over one WarmPool per tenant (tenantPools, so one tenant's keys never evict another's
 * spares) of `options.warmPool` (absent or size 0: every claim is cold). `poolBackend(tenant)` gives
 * a tenant's pool entries (called once per tenant); `createCold` starts a sandbox without the pool,
 * also for the specs `backendPools` leaves out (created cold, which refuses what the backend lacks).
 * The pool key is the spec without its workspace, the identity's tenant (default `local`) and
 * controllerId, and ClaimOptions.policyHash; the claim adds the session id, the signal and the
 * copy-mode workspace.
 */
export function pooledClaims<P>(
  options: BackendOptions,
  poolBackend: (tenant: string) => PoolBackend<PoolRequest, P>,
  createCold: (spec: SandboxSpec, identity: SandboxIdentity, options: CallOptions) => Promise<Sandbox>,
  /** The backend's own limit on what its spares can be (Kubernetes: no network); default all. */
  backendPools: (spec: SandboxSpec) => boolean = () => true,
): PooledClaims {
  const config = options.warmPool;
  const maxNetworked = config?.networked ?? 0;
  const networkedSpares = networkedSpareBound(maxNetworked);
  const pools =
    config && config.size > 0
      ? tenantPools({
          backend: (tenant) => networkedSpares.limit(poolBackend(tenant)),
          size: config.size,
          maxIdleMs: config.maxIdleMs,
          ...(config.maxKeys ? { maxKeys: config.maxKeys } : {}),
          ...(options.log ? { log: options.log } : {}),
        })
      : undefined;
  return {
    async claim(spec, identity, claimOptions = {}) {
      const t0 = performance.now();
      const tenant = identity.tenant ?? "local";
      const pool = poolable(spec, maxNetworked > 0) && backendPools(spec) ? pools?.of(tenant) : undefined;
      const { signal, policyHash } = claimOptions;
      if (!pool) {
        const sandbox = await createCold(spec, identity, signal ? { signal } : {});
        options.onSandboxStart?.("cold");
        return { sandbox, pooled: false, claimMs: performance.now() - t0 };
      }
      // The key's template and the claim's own fields, each passed to the pool as its own part.
      const { sessionId, ...owner } = identity;
      const { workspace, ...template } = spec;
      const claim = await pool.claim({
        template: { ...template, ...owner },
        claim: {
          ...(sessionId !== undefined ? { sessionId } : {}),
          ...(signal ? { signal } : {}),
          // poolable: no workspace or a copy-mode one.
          ...(workspace ? { workspace: workspace as CopyWorkspace } : {}),
        },
        policyHash: policyHash ?? "",
      });
      options.onSandboxStart?.(claim.pooled ? "pool" : "cold");
      return claim;
    },
    poolStats: () => ({ idle: pools?.idle() ?? 0, backingOff: pools?.backingOff() ?? 0 }),
    close: async () => pools?.drain(),
  };
}
