/**
 * The log line of a ChannelEvent (backend.ts): what `warden serve` writes when a session's exec
 * channel ends and is re-opened (or not). Pure, engine-free: no backend's code or types.
 */
import type { ChannelEvent } from "./backend.js";

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
