/**
 * How long a warm pool key waits before trying another spare after one found no room (pure): the
 * cluster's scheduler took no node for it, so the spare was withdrawn at once and a new one would
 * only compete with session Pods for whatever room frees up. The wait doubles per spare that finds
 * no room, from `firstMs` up to `maxMs`, and ends with the first spare that starts.
 */

/** A back-off schedule, ms. */
export interface RefillBackoff {
  /** The first wait. */
  firstMs: number;
  /** The longest wait. */
  maxMs: number;
}

/** The default schedule: 2 s, 4 s, 8 s, 16 s, 32 s, then 60 s. */
export const REFILL_BACKOFF: RefillBackoff = { firstMs: 2000, maxMs: 60_000 };

/**
 * The wait after a spare found no room, ms: `schedule.firstMs` when the key was not backing off
 * (`previousMs` undefined), else twice `previousMs`, at most `schedule.maxMs`.
 */
export function nextRefillBackoffMs(
  previousMs: number | undefined,
  schedule: RefillBackoff = REFILL_BACKOFF,
): number {
  if (previousMs === undefined) return Math.min(schedule.firstMs, schedule.maxMs);
  return Math.min(schedule.maxMs, previousMs * 2);
}

/**
 * The Retry-After of a create that found no room while its key backs off `waitMs`: the wait in
 * whole seconds, rounded up, at least 1 (the pool's own guess of when room is worth asking for).
 */
export function retryAfterSecondsOf(waitMs: number): number {
  return Math.max(1, Math.ceil(waitMs / 1000));
}
