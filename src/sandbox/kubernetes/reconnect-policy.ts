/**
 * When a Kubernetes session's exec channel ends unexpectedly, what to try (pure, no I/O): how many
 * attempts one reconnect makes and how long it waits between them, and whether the Pod can still
 * be reached at all. pod-channel.ts does the I/O and reports each ChannelEvent (../backend.ts).
 */
import type { V1Pod } from "@kubernetes/client-node";

/** Bounds of one reconnect: `attempts` tries, waiting `firstDelayMs`, doubling up to `maxDelayMs`, between them. */
export interface ReconnectPolicy {
  attempts: number;
  firstDelayMs: number;
  maxDelayMs: number;
}

/**
 * Default: 5 attempts, 0.5, 1, 2 and 4 s apart (about 7.5 s of waiting plus the attempts), enough for
 * an API server restart or a network blip; a Pod that is gone is never retried.
 */
export const DEFAULT_RECONNECT_POLICY: ReconnectPolicy = { attempts: 5, firstDelayMs: 500, maxDelayMs: 8000 };

/**
 * How long to wait after failed attempt `attempt` (0-based) before the next, ms; undefined when
 * that was the last attempt the policy allows.
 */
export function reconnectDelayMs(
  attempt: number,
  policy: ReconnectPolicy = DEFAULT_RECONNECT_POLICY,
): number | undefined {
  if (attempt + 1 >= policy.attempts) return undefined;
  return Math.min(policy.maxDelayMs, policy.firstDelayMs * 2 ** attempt);
}

/**
 * Whether a channel may be re-opened in `pod` (as the API returned it; null when it answered 404):
 * `{ ok: true }` while it runs and is not being deleted, else why not, for the error.
 */
export function podReachable(pod: V1Pod | null): { ok: true } | { ok: false; why: string } {
  if (!pod) return { ok: false, why: "it no longer exists" };
  if (pod.metadata?.deletionTimestamp) return { ok: false, why: "it is being deleted" };
  const phase = pod.status?.phase ?? "Pending";
  if (phase !== "Running") return { ok: false, why: `it is ${phase}` };
  const state = pod.status?.containerStatuses?.[0]?.state;
  if (state && !state.running)
    return { ok: false, why: `its container is ${state.terminated ? "terminated" : "waiting"}` };
  return { ok: true };
}
