/** The warm pool's state as /metrics reports it (warden_pool_idle, warden_pool_backoff_keys). */
import type { SessionBackend } from "./backend.js";

/** Spare sandboxes waiting, and keys backing off as no node takes their spares (0s without a pool). */
export function poolState(backend: Pick<SessionBackend, "idleSpares" | "poolBackoffKeys">): {
  idle: number;
  backoffKeys: number;
} {
  return { idle: backend.idleSpares?.() ?? 0, backoffKeys: backend.poolBackoffKeys?.() ?? 0 };
}
