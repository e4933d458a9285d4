/**
 * The channel's heartbeat: while a channel carries nothing, ping the helper every `everyMs`, so the
 * stream under it never looks idle to whatever closes idle streams on its path (on Kubernetes the
 * CRI streaming server: containerd's `stream_idle_timeout`, default 4 h; the kubelet's
 * `--streaming-connection-idle-timeout`; a load balancer in front of the API server). A ping that
 * gets no answer while nothing else arrives either means the stream is dead without having said so
 * (a half-open TCP connection): `onUnanswered` is told, and the owner closes the channel.
 * Pings are quiet requests (they do not make the channel busy for the output share).
 */
import type { ChannelClient } from "./client.js";

/**
 * How long until the next ping is due (pure), ms: `everyMs` after the last traffic, 0 when that
 * time has passed. `nowMs` and `lastTrafficMs` are on one clock (performance.now()).
 */
export function heartbeatDelayMs(nowMs: number, lastTrafficMs: number, everyMs: number): number {
  return Math.max(0, lastTrafficMs + everyMs - nowMs);
}

/** Options of startHeartbeat. */
export interface HeartbeatOptions {
  /** Ping after this long without traffic, ms (at least 1). */
  everyMs: number;
  /** How long a ping may wait for its pong, ms. Default: `everyMs`, at most 30 s. */
  timeoutMs?: number;
  /**
   * A ping was not answered within `timeoutMs` and no byte arrived meanwhile; `reason` says so.
   * The heartbeat has stopped; the owner decides (closes the channel).
   */
  onUnanswered(reason: string): void;
}

/** A running heartbeat; `stop` ends it (idempotent). It also stops by itself when the channel closes. */
export interface Heartbeat {
  stop(): void;
}

/**
 * Starts pinging `client` as the file comment says. Its timer is unref'd (it never keeps the
 * process alive) and cleared on stop and when the channel closes; a ping never outlives its
 * timeout, so nothing hangs.
 */
export function startHeartbeat(client: ChannelClient, options: HeartbeatOptions): Heartbeat {
  const { everyMs } = options;
  const timeoutMs = options.timeoutMs ?? Math.min(everyMs, 30_000);
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const stop = () => {
    stopped = true;
    clearTimeout(timer);
    timer = undefined;
  };
  const arm = () => {
    if (stopped || client.closed) return;
    timer = setTimeout(beat, heartbeatDelayMs(performance.now(), client.lastTrafficAt, everyMs));
    timer.unref();
  };
  const beat = () => {
    timer = undefined;
    if (stopped || client.closed) return;
    if (heartbeatDelayMs(performance.now(), client.lastTrafficAt, everyMs) > 0) return arm();
    const sentAt = performance.now();
    client.ping(undefined, { timeoutMs, quiet: true }).then(arm, () => {
      if (stopped || client.closed) return;
      // A slow pong behind other bytes, or behind our own pause (a full spill queue), is not a dead stream.
      if (client.lastReceivedAt > sentAt || client.heldSince(sentAt)) return arm();
      stop();
      options.onUnanswered(
        `the helper did not answer a heartbeat ping within ${timeoutMs} ms and sent nothing else meanwhile`,
      );
    });
  };
  client.onClosed(stop);
  arm();
  return { stop };
}
