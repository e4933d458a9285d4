/**
 * When a Kubernetes session's exec channel ends unexpectedly, what to try (pure, no I/O): how many
 * attempts one reconnect makes and how long it waits between them, and whether the Pod can still
 * be reached at all. pod-channel.ts does the I/O.
 */
import type { V1Pod } from "@kubernetes/client-node";

/** What happened to a session's exec channel (KubernetesCluster.onChannelEvent). */
export interface ChannelEvent {
  /** The Pod's name. */
  pod: string;
  /** The session the Pod serves (its sandbox's sessionId). */
  sessionId: string;
  /**
   * "lost": the stream ended under the live session, a re-open starts; "reopened": a new channel
   * serves (after `attempts` tries); "failed": a round gave up (`final`: the Pod is gone, its
   * stream was corrupted, or the sandbox held its re-opened helper and the Pod was deleted;
   * otherwise the next call tries again).
   */
  outcome: "lost" | "reopened" | "failed";
  /** Why the previous channel ended (its stream's close reason). */
  reason: string;
  /** Channels re-opened for this Pod so far. */
  reconnects: number;
  attempts?: number;
  /** Why the round failed (outcome "failed"). */
  error?: string;
  final?: boolean;
}

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

/**
 * The log line of a ChannelEvent (pure), beside `warden serve`'s "session <id> calls go through
 * <path>" line: which path the session's calls take now and how many re-opens it took.
 */
export function channelEventLine(event: ChannelEvent): string {
  const head = `warden serve: session ${event.sessionId}`;
  if (event.outcome === "lost")
    return `${head}: the exec stream of Pod ${event.pod} ended (${event.reason}); re-opening its channel`;
  if (event.outcome === "reopened")
    return `${head} calls go through channel again: Pod ${event.pod}'s exec channel re-opened (reconnect ${event.reconnects}, after ${event.attempts ?? 1} attempt(s))`;
  const next = event.final ? "its calls fail from now on" : "the next call tries again";
  return `${head}: Pod ${event.pod}'s exec channel not re-opened (${event.error ?? "?"}); ${next}`;
}
