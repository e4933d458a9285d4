/** The warm pool's state as /metrics reports it (warden_pool_idle, warden_pool_backoff_keys). */
import type { SandboxBackend } from "../../sandbox/index.js";

/** Spare sandboxes waiting, and keys backing off as no node takes their spares (0s without a pool). */
export function poolState(backend: Pick<SandboxBackend, "poolStats">): { idle: number; backoffKeys: number } {
  const { idle, backingOff } = backend.poolStats();
  return { idle, backoffKeys: backingOff };
}
