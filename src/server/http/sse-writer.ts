/**
 * A Server-Sent Events writer that respects backpressure. While the socket is not draining,
 * `tool_execution_update` events are coalesced (only the newest update per tool call is kept) and
 * an update queued before its call's end event is dropped; start and end events and the final
 * results are never dropped. So a slow reader costs at most a few queued events per call, and the
 * server's memory does not grow with the amount of output. Wire format: W3C EventSource
 * (`event:` and `data:` lines, blank line between events).
 */
import type { Writable } from "node:stream";

interface Pending {
  event: string;
  /** Tool-call id of an update that may still be replaced by a newer one. */
  coalesceKey?: string;
  data: unknown;
}

/**
 * `data` as JSON; data JSON cannot hold (too deep, a BigInt, a cycle) becomes an `{code, message}`
 * naming the event, so neither send nor a later flush from the socket's `drain` ever throws (a throw
 * there is an uncaught exception: the whole server) and the client learns of the event.
 */
function serialize(event: string, data: unknown): string {
  try {
    return JSON.stringify(data) ?? "null";
  } catch (err) {
    const message = `The ${event} event could not be serialized (${(err as Error).message}).`;
    return JSON.stringify({ code: "INTERNAL", message });
  }
}

/** Counters a caller (or a test) can read. */
export interface SseStats {
  written: number;
  coalesced: number;
  /** Bytes of the events handed to the stream (UTF-8), for the request's audit line. */
  bytes: number;
}

/** Writes SSE events to one response stream. */
export class SseWriter {
  private readonly queue: Pending[] = [];
  private blocked = false;
  private closed = false;
  readonly stats: SseStats = { written: 0, coalesced: 0, bytes: 0 };

  constructor(private readonly out: Writable) {
    out.on("drain", () => this.flush());
    out.on("close", () => {
      this.closed = true;
      this.queue.length = 0;
    });
  }

  /** Queues or writes one event. `coalesceKey` marks an update that a newer one may replace. */
  send(event: string, data: unknown, coalesceKey?: string): void {
    if (this.closed) return;
    if (coalesceKey !== undefined && this.blocked) {
      const index = this.queue.findIndex((p) => p.coalesceKey === coalesceKey);
      if (index >= 0) {
        this.queue[index] = { event, data, coalesceKey };
        this.stats.coalesced++;
        return;
      }
    }
    this.queue.push({ event, data, ...(coalesceKey === undefined ? {} : { coalesceKey }) });
    if (!this.blocked) this.flush();
  }

  /** Drops a queued, not yet written update for `coalesceKey` (its end event supersedes it). */
  dropPending(coalesceKey: string): void {
    const index = this.queue.findIndex((p) => p.coalesceKey === coalesceKey);
    if (index >= 0) {
      this.queue.splice(index, 1);
      this.stats.coalesced++;
    }
  }

  /** Events still waiting for the socket. */
  get queued(): number {
    return this.queue.length;
  }

  /** Resolves once everything queued is handed to the socket (or the socket closed). */
  async settle(): Promise<void> {
    while (this.queue.length > 0 && !this.closed) {
      await new Promise<void>((resolve) => {
        const done = () => {
          this.out.off("drain", done);
          this.out.off("close", done);
          resolve();
        };
        this.out.once("drain", done);
        this.out.once("close", done);
      });
    }
  }

  private flush(): void {
    this.blocked = false;
    while (this.queue.length > 0 && !this.closed) {
      const next = this.queue.shift()!;
      this.stats.written++;
      const text = `event: ${next.event}\ndata: ${serialize(next.event, next.data)}\n\n`;
      this.stats.bytes += Buffer.byteLength(text);
      const ok = this.out.write(text);
      if (!ok) {
        this.blocked = true;
        return;
      }
    }
  }
}
