/**
 * The channel's opening handshake, on any transport: ping until the helper answers. A helper
 * that was just attached to may not see (or not be heard on) the first ping, so the ping can be
 * repeated; a late reply to an abandoned ping is dropped by the client.
 */
import { onAbort } from "../../../util/index.js";
import type { ChannelClient } from "./client.js";
import type { PongBody } from "./messages.js";

/** Options of awaitHelper. */
export interface HandshakeOptions {
  /** How long to wait for the helper's first reply, in ms. Default 5000. */
  timeoutMs?: number;
  /** Re-send the ping every this many ms until a reply or `timeoutMs` (default: one ping). */
  retryPingMs?: number;
  signal?: AbortSignal;
}

/**
 * Pings through `client` until the helper answers; resolves with its pong. Rejects AbortError
 * when no reply came within `timeoutMs` or `signal` fired, SandboxNotRunningError when the
 * channel closed, or the helper's error.
 */
export async function awaitHelper(client: ChannelClient, options: HandshakeOptions = {}): Promise<PongBody> {
  const giveUp = new AbortController();
  const timer = setTimeout(() => giveUp.abort(), options.timeoutMs ?? 5000);
  const unlisten = onAbort(options.signal, () => giveUp.abort());
  try {
    if (!options.retryPingMs) return await client.ping(giveUp.signal);
    return await pingUntilAnswered(client, giveUp.signal, options.retryPingMs);
  } finally {
    clearTimeout(timer);
    unlisten();
  }
}

/** Pings every `everyMs` until one is answered; rejects like ping once `signal` fires. */
async function pingUntilAnswered(
  client: ChannelClient,
  signal: AbortSignal,
  everyMs: number,
): Promise<PongBody> {
  for (;;) {
    const attempt = new AbortController();
    const timer = setTimeout(() => attempt.abort(), everyMs);
    const unlisten = onAbort(signal, () => attempt.abort());
    try {
      return await client.ping(attempt.signal);
    } catch (err) {
      if (signal.aborted || !(err instanceof Error && err.name === "AbortError")) throw err;
    } finally {
      clearTimeout(timer);
      unlisten();
    }
  }
}
