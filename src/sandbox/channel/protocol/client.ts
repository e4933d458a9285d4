/**
 * The controller end of warden's exec channel: many concurrent requests (commands and file
 * operations) multiplexed over one byte transport to warden-helper, each with its own request id.
 * Output is handed to the request's handler as each frame arrives; nothing is accumulated beyond
 * one incomplete frame, so a command printing 1 GiB costs the controller one frame (<= 64 KiB
 * for output) of memory while the transport's own backpressure slows the helper down. Reading
 * pauses while the output share paces the channel and while a request holds it (its output's
 * consumer is full: a spill queue, ReadHold), and resumes when neither does.
 */
import { SandboxError, SandboxNotRunningError } from "../../../errors.js";
import { AbortError, onAbort, throwIfAborted } from "../../../util/index.js";
import { ReadHold } from "../../read-hold.js";
import { encodeFrame, type Frame, FrameDecoder, FrameType, type FrameTypeCode } from "./frame.js";
import { errorFromHelper, type PongBody, parseJson, toErrorBody } from "./messages.js";
import { type OutputMeter, type OutputShare, outputShare } from "./output-share.js";
import type { ChannelTransport } from "./transport.js";

export type { ChannelTransport };

/** Receives the frames of one request. Return true from `onFrame` when the request is finished. */
export interface RequestHandler {
  onFrame(frame: Frame): boolean;
  onClose(error: Error): void;
}

/** Options of a ChannelClient. */
export interface ChannelClientOptions {
  /** Container id, for SandboxNotRunningError when the channel drops. */
  containerId: string;
  /** Diagnostics (protocol errors, the helper's own stderr lines). */
  log?: (message: string) => void;
  /**
   * Deadline of each one-reply request (`call`: file operations, ping), ms. Default
   * DEFAULT_REQUEST_TIMEOUT_MS. A request may pass its own.
   */
  requestTimeoutMs?: number;
  /**
   * The share of the host this channel's incoming bytes take part in (output-share.ts): paced
   * while another channel of the share is busy. Default: the process-wide `outputShare`.
   */
  share?: OutputShare;
}

/** Default deadline of a one-reply request (file operations, ping): 30 s. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/** Multiplexes requests over one transport. Create with `new ChannelClient(transport, options)`. */
export class ChannelClient {
  private readonly pending = new Map<number, RequestHandler>();
  /** Ids of quiet requests (heartbeat pings): not "busy" for the output share. */
  private readonly quiet = new Set<number>();
  private readonly closeListeners: Array<(reason: string) => void> = [];
  private lost = false;
  private nextId = 1;
  private wrapped = false;
  private corruption: string | null = null;
  private closedReason: string | null = null;
  private readonly share: OutputShare;
  private readonly meter: OutputMeter;
  private resumeTimer: NodeJS.Timeout | undefined;
  /** Each open request's hold on reading (its output callbacks' promises). */
  private readonly holds = new Map<number, ReadHold>();
  /** Ids of requests whose hold is on: reading is paused for them. */
  private readonly holding = new Set<number>();
  /** When a request's hold last began or ended (performance.now() ms); undefined before any. */
  private lastHoldChangeAt: number | undefined;
  private readingPaused = false;

  constructor(
    private readonly transport: ChannelTransport,
    readonly options: ChannelClientOptions,
  ) {
    const decoder = new FrameDecoder((frame) => this.dispatch(frame));
    this.share = options.share ?? outputShare;
    this.meter = this.share.join(this);
    transport.start({
      onData: (chunk) => {
        if (this.closed) return;
        try {
          decoder.push(chunk);
        } catch (err) {
          this.corrupted((err as Error).message);
          return;
        }
        this.lastReceivedAt = performance.now();
        this.lastTrafficAt = this.lastReceivedAt;
        this.pace(chunk.length);
      },
      onClose: (reason, lost) => {
        this.lost = lost === true && !this.closed;
        this.fail(reason);
      },
    });
  }

  /**
   * True once the transport has closed; every later request rejects SandboxNotRunningError (or
   * SandboxError naming the corruption when the stream was closed as corrupted).
   */
  get closed(): boolean {
    return this.closedReason !== null;
  }

  /** Why the channel closed (the transport's reason, or the controller's), or null while open. */
  get closeReason(): string | null {
    return this.closedReason;
  }

  /**
   * True when the channel closed because its transport lost the connection (ChannelTransport
   * `onClose`'s `lost`), not because the helper ended or the controller closed it.
   */
  get streamLost(): boolean {
    return this.lost;
  }

  /** The transport's name (ChannelTransport `name`; "stream" when it has none). */
  get transportName(): string {
    return this.transport.name ?? "stream";
  }

  /** Number of requests in flight, quiet ones (heartbeat pings) not counted. */
  get inFlight(): number {
    return this.pending.size - this.quiet.size;
  }

  /** When bytes last went out or came in (performance.now() ms); the heartbeat reads it. */
  lastTrafficAt = performance.now();

  /** When bytes last came in from the helper (performance.now() ms). */
  lastReceivedAt = performance.now();

  /**
   * Calls `listener` once with the reason when the channel closes (at once when it already has):
   * the transport ended, the stream was corrupted, or `close` was called.
   */
  onClosed(listener: (reason: string) => void): void {
    if (this.closedReason !== null) listener(this.closedReason);
    else this.closeListeners.push(listener);
  }

  /** When a request was last open (performance.now() ms), for the output share; undefined before any. */
  lastBusyAt: number | undefined;

  /**
   * Starts a request: registers `handler` under a fresh id and sends the frame. Returns a sender
   * for follow-up frames (e.g. `kill`) and `release` to stop listening (late frames are dropped).
   * A `quiet` request (a heartbeat ping) does not make the channel busy for the output share.
   * Throws SandboxNotRunningError when the channel is closed.
   */
  open(
    type: FrameTypeCode,
    payload: Buffer,
    handler: RequestHandler,
    options: { quiet?: boolean } = {},
  ): { id: number; send(type: FrameTypeCode, payload: Buffer): void; release(): void; hold: ReadHold } {
    this.assertOpen();
    const id = this.nextId;
    if (this.nextId >= 0xffff_fff0) this.wrapped = true;
    this.nextId = this.nextId >= 0xffff_fff0 ? 1 : this.nextId + 1;
    this.pending.set(id, handler);
    const hold = new ReadHold(
      () => this.setHolding(id, true),
      () => this.setHolding(id, false),
    );
    this.holds.set(id, hold);
    if (options.quiet) this.quiet.add(id);
    else this.lastBusyAt = performance.now();
    this.send(encodeFrame(type, id, payload));
    return {
      id,
      send: (t, p) => {
        if (!this.closed && this.pending.has(id)) this.send(encodeFrame(t, id, p));
      },
      release: () => {
        if (this.pending.delete(id)) this.settled(id);
      },
      hold,
    };
  }

  /**
   * True when reading was held for a request's output at any time since `sinceMs`
   * (performance.now() ms), or is now: a reply not received meanwhile may be waiting behind our
   * own pause, which says nothing about the stream (the heartbeat asks).
   */
  heldSince(sinceMs: number): boolean {
    return this.holding.size > 0 || (this.lastHoldChangeAt ?? Number.NEGATIVE_INFINITY) >= sinceMs;
  }

  private send(frame: Buffer): void {
    this.lastTrafficAt = performance.now();
    this.transport.write(frame);
  }

  /** A request ended: it no longer keeps the channel busy (a quiet one never did) nor holds reading. */
  private settled(id: number): void {
    if (!this.quiet.delete(id)) this.lastBusyAt = performance.now();
    this.holds.get(id)?.end();
    this.holds.delete(id);
  }

  /** Request `id`'s hold went on or off (ReadHold): pauses or resumes reading as needed. */
  private setHolding(id: number, on: boolean): void {
    if (on) this.holding.add(id);
    else this.holding.delete(id);
    this.lastHoldChangeAt = performance.now();
    this.updateReading();
  }

  /** Pauses the transport while a hold or the pacing timer asks, resumes once neither does. */
  private updateReading(): void {
    if (this.closed || !this.transport.pause) return;
    const pause = this.holding.size > 0 || this.resumeTimer !== undefined;
    if (pause === this.readingPaused) return;
    this.readingPaused = pause;
    if (pause) this.transport.pause();
    else this.transport.resume?.();
  }

  /**
   * One request, one reply: resolves with the `result` (or `pong`) frame, rejects with the
   * helper's error mapped through errorFromHelper (`verb` and `path` name the operation),
   * AbortError when `signal` fires, SandboxNotRunningError when the channel drops, and
   * SandboxError ("warden-helper did not answer <verb> <path> within N ms") when no reply came
   * within `timeoutMs` (default: the client's requestTimeoutMs, 30 s). A timed-out request is
   * released (its late reply is dropped); the channel stays open for other requests. `quiet`: see open.
   */
  call(
    type: FrameTypeCode,
    payload: Buffer,
    verb: string,
    path: string,
    signal?: AbortSignal,
    timeoutMs: number = this.options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    quiet = false,
  ): Promise<Frame> {
    throwIfAborted(signal);
    return new Promise<Frame>((resolve, reject) => {
      let unlisten = () => {};
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        unlisten();
        clearTimeout(timer);
      };
      const request = this.open(
        type,
        payload,
        {
          onFrame: (frame) => {
            done();
            if (frame.type === FrameType.error) {
              reject(errorFromHelper(toErrorBody(parseJson(frame.payload, "error")), verb, path));
            } else resolve(frame);
            return true;
          },
          onClose: (err) => {
            done();
            reject(err);
          },
        },
        { quiet },
      );
      unlisten = onAbort(signal, () => {
        done();
        request.release();
        reject(new AbortError());
      });
      if (!this.pending.has(request.id)) return; // already settled by an aborted signal
      timer = setTimeout(() => {
        done();
        request.release();
        reject(
          new SandboxError(
            `warden-helper did not answer ${verb} ${path} within ${timeoutMs} ms; the operation was abandoned (retry it, or recreate the sandbox if this repeats).`,
          ),
        );
      }, timeoutMs);
      if (quiet) timer.unref(); // a heartbeat never keeps the process alive
    });
  }

  /**
   * Round trip to the helper; resolves with its version and pid. Rejects like `call`; `timeoutMs`
   * (default the client's) bounds the wait, `quiet` (a heartbeat) leaves the output share alone.
   */
  async ping(signal?: AbortSignal, options: { timeoutMs?: number; quiet?: boolean } = {}): Promise<PongBody> {
    const frame = await this.call(
      FrameType.ping,
      Buffer.alloc(0),
      "pinging",
      "warden-helper",
      signal,
      options.timeoutMs,
      options.quiet,
    );
    const body = parseJson(frame.payload, "pong") as Partial<PongBody>;
    return { version: String(body.version ?? "?"), pid: Number(body.pid ?? 0) };
  }

  /**
   * Closes the transport; pending requests reject SandboxNotRunningError. `reason` is what
   * closeReason and onClosed listeners get (default "closed by the controller"). Idempotent.
   */
  close(reason = "closed by the controller"): void {
    if (this.closed) return;
    this.fail(reason); // first: the transport may report its own close synchronously
    this.transport.close();
  }

  /** Pauses the transport for as long as the share's rate asks after `bytes` arrived (output-share.ts). */
  private pace(bytes: number): void {
    if (!this.transport.pause) return;
    // Bytes the transport had buffered before a pause took hold still count.
    const waitMs = this.meter.take(bytes);
    if (waitMs <= 0 || this.resumeTimer !== undefined) return;
    this.resumeTimer = setTimeout(() => {
      this.resumeTimer = undefined;
      this.updateReading();
    }, waitMs);
    this.updateReading();
  }

  private dispatch(frame: Frame): void {
    if (this.closed) return;
    const handler = this.pending.get(frame.id);
    if (!handler) {
      // A released (aborted, timed-out) request's late frames are dropped; an id never issued
      // means the stream is out of sync or written by someone else: stop trusting it.
      if (!this.wasIssued(frame.id))
        this.corrupted(`a frame for request id ${frame.id}, which was never sent`);
      return;
    }
    if (handler.onFrame(frame)) {
      this.pending.delete(frame.id);
      this.settled(frame.id);
    }
  }

  /** True when `id` was handed out by open (ids run 1, 2, ... and wrap at 0xfffffff0). */
  private wasIssued(id: number): boolean {
    if (id === 0 || id > 0xffff_fff0) return false;
    return this.wrapped || id < this.nextId;
  }

  /**
   * The stream cannot be trusted (unparseable frame, unknown request id): logs, closes the
   * channel, and fails every pending and later request fast with the reason.
   */
  private corrupted(what: string): void {
    this.options.log?.(`channel: corrupted stream: ${what}`);
    this.corruption ??= what;
    this.fail(`corrupted stream (${what})`);
    this.transport.close();
  }

  private fail(reason: string): void {
    if (this.closedReason !== null) return;
    this.closedReason = reason;
    this.share.leave(this);
    clearTimeout(this.resumeTimer);
    this.resumeTimer = undefined;
    const handlers = [...this.pending.values()];
    this.pending.clear();
    this.quiet.clear();
    for (const hold of this.holds.values()) hold.end();
    this.holds.clear();
    this.holding.clear();
    for (const h of handlers) h.onClose(this.closedError());
    for (const listener of this.closeListeners.splice(0)) listener(reason);
  }

  /**
   * What requests reject with once the channel closed: SandboxError naming the corruption, else
   * SandboxNotRunningError (its cause names the close reason).
   */
  closedError(): Error {
    if (this.corruption !== null) {
      return new SandboxError(
        `The warden-helper channel of sandbox container ${this.options.containerId.slice(0, 12)} was closed: corrupted stream (${this.corruption}); destroy this sandbox and create a new one.`,
      );
    }
    return new SandboxNotRunningError(this.options.containerId, {
      cause: new SandboxError(`warden-helper channel closed: ${this.closedReason}`),
    });
  }

  private assertOpen(): void {
    if (this.closedReason !== null) throw this.closedError();
  }
}
