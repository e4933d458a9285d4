/**
 * A transport that can move to another one mid-stream: the channel opens on one byte stream (the
 * container's attach stream on Docker) and, once the helper has answered a `switch` request on it,
 * continues on a second (a unix socket, ../../docker/channel/socket.ts). The first stays open for what the
 * helper writes outside the channel (its diagnostics on stderr), and its loss after the move
 * no longer ends the channel.
 */
import type { ChannelTransport } from "./client.js";

/** A ChannelTransport plus `moveTo`, which hands the channel to `next` (call it once). */
export interface SwitchableTransport extends ChannelTransport {
  moveTo(next: ChannelTransport): void;
  /** True once the channel runs on the second transport. */
  readonly moved: boolean;
}

/**
 * Wraps `first`. Before `moveTo`, everything goes through `first`; after it, frames are written
 * to and read from `next`, and only `next` closing ends the channel. Bytes `next` received before
 * the move are delivered once it starts (a transport buffers until `start`). Reading held with
 * `pause` stays held across the move.
 */
export function switchableTransport(first: ChannelTransport): SwitchableTransport {
  let current = first;
  let sinks: Parameters<ChannelTransport["start"]>[0] | undefined;
  let moved = false;
  let closed = false;
  let paused = false;
  return {
    get moved() {
      return moved;
    },
    get name() {
      return current.name;
    },
    write: (chunk) => current.write(chunk),
    start(s) {
      sinks = s;
      first.start({
        onData: (chunk) => {
          if (!moved) s.onData(chunk);
        },
        onClose: (reason, lost) => {
          if (moved) return;
          closed = true; // the channel ended: a later moveTo closes what it is handed
          s.onClose(reason, lost);
        },
      });
    },
    moveTo(next) {
      if (moved || !sinks) throw new Error("moveTo: the transport has not started or already moved");
      moved = true;
      current = next;
      const s = sinks;
      next.start({
        onData: (chunk) => s.onData(chunk),
        onClose: (reason, lost) => {
          first.close();
          s.onClose(reason, lost);
        },
      });
      if (closed) next.close();
      // Reading stays held on the channel's new transport while the client holds it; the first
      // keeps being read, so the helper's diagnostics never fill its pipe.
      if (paused) {
        next.pause?.();
        first.resume?.();
      }
    },
    close() {
      closed = true;
      current.close();
      if (current !== first) first.close();
    },
    pause() {
      paused = true;
      current.pause?.();
    },
    resume() {
      paused = false;
      current.resume?.();
    },
  };
}
