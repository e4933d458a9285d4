/**
 * The controller end of warden's exec channel: many concurrent requests (commands and file
 * operations) multiplexed over one byte transport to warden-helper, each with its own request id.
 * Output is handed to the request's handler as each frame arrives; nothing is accumulated beyond
 * one incomplete frame, so a command printing 1 GiB costs the controller one frame (<= 64 KiB
 * for output) of memory while the transport's own backpressure slows the helper down.
 */
import { SandboxError, SandboxNotRunningError } from "../../errors.js";
import { AbortError, onAbort, throwIfAborted } from "../../util/abort.js";
import { encodeFrame, type Frame, FrameDecoder, FrameType, type FrameTypeCode } from "./frame.js";
import { errorFromHelper, type PongBody, parseJson, toErrorBody } from "./protocol.js";

/** A byte pipe to the helper: frames out through `write`, raw bytes in through the sinks. */
export interface ChannelTransport {
  write(chunk: Buffer): void;
  /** Starts delivery; `onData` gets the helper's frame bytes (already demuxed), `onClose` once. */
  start(sinks: { onData(chunk: Buffer): void; onClose(reason: string): void }): void;
  /** Closes the transport; `onClose` follows. */
  close(): void;
}

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
}

/** Multiplexes requests over one transport. Create with `new ChannelClient(transport, options)`. */
export class ChannelClient {
  private readonly pending = new Map<number, RequestHandler>();
  private nextId = 1;
  private closedReason: string | null = null;

  constructor(
    private readonly transport: ChannelTransport,
    readonly options: ChannelClientOptions,
  ) {
    const decoder = new FrameDecoder((frame) => this.dispatch(frame));
    transport.start({
      onData: (chunk) => {
        try {
          decoder.push(chunk);
        } catch (err) {
          this.options.log?.(`channel: ${(err as Error).message}`);
          transport.close();
        }
      },
      onClose: (reason) => this.fail(reason),
    });
  }

  /** True once the transport has closed; every later request rejects SandboxNotRunningError. */
  get closed(): boolean {
    return this.closedReason !== null;
  }

  /** Number of requests in flight. */
  get inFlight(): number {
    return this.pending.size;
  }

  /**
   * Starts a request: registers `handler` under a fresh id and sends the frame. Returns a sender
   * for follow-up frames (e.g. `kill`) and `release` to stop listening (late frames are dropped).
   * Throws SandboxNotRunningError when the channel is closed.
   */
  open(
    type: FrameTypeCode,
    payload: Buffer,
    handler: RequestHandler,
  ): { id: number; send(type: FrameTypeCode, payload: Buffer): void; release(): void } {
    this.assertOpen();
    const id = this.nextId;
    this.nextId = this.nextId >= 0xffff_fff0 ? 1 : this.nextId + 1;
    this.pending.set(id, handler);
    this.transport.write(encodeFrame(type, id, payload));
    return {
      id,
      send: (t, p) => {
        if (!this.closed && this.pending.has(id)) this.transport.write(encodeFrame(t, id, p));
      },
      release: () => {
        this.pending.delete(id);
      },
    };
  }

  /**
   * One request, one reply: resolves with the `result` (or `pong`) frame, rejects with the
   * helper's error mapped through errorFromHelper (`verb` and `path` name the operation),
   * AbortError when `signal` fires, SandboxNotRunningError when the channel drops.
   */
  call(
    type: FrameTypeCode,
    payload: Buffer,
    verb: string,
    path: string,
    signal?: AbortSignal,
  ): Promise<Frame> {
    throwIfAborted(signal);
    return new Promise<Frame>((resolve, reject) => {
      let unlisten = () => {};
      const request = this.open(type, payload, {
        onFrame: (frame) => {
          unlisten();
          if (frame.type === FrameType.error) {
            reject(errorFromHelper(toErrorBody(parseJson(frame.payload, "error")), verb, path));
          } else resolve(frame);
          return true;
        },
        onClose: (err) => {
          unlisten();
          reject(err);
        },
      });
      unlisten = onAbort(signal, () => {
        request.release();
        reject(new AbortError());
      });
    });
  }

  /** Round trip to the helper; resolves with its version and pid. */
  async ping(signal?: AbortSignal): Promise<PongBody> {
    const frame = await this.call(FrameType.ping, Buffer.alloc(0), "pinging", "warden-helper", signal);
    const body = parseJson(frame.payload, "pong") as Partial<PongBody>;
    return { version: String(body.version ?? "?"), pid: Number(body.pid ?? 0) };
  }

  /** Closes the transport; pending requests reject SandboxNotRunningError. Idempotent. */
  close(): void {
    if (!this.closed) this.transport.close();
    this.fail("closed by the controller");
  }

  private dispatch(frame: Frame): void {
    const handler = this.pending.get(frame.id);
    if (!handler) return; // released (aborted) or unknown: drop.
    if (handler.onFrame(frame)) this.pending.delete(frame.id);
  }

  private fail(reason: string): void {
    if (this.closedReason !== null) return;
    this.closedReason = reason;
    const handlers = [...this.pending.values()];
    this.pending.clear();
    for (const h of handlers) h.onClose(this.notRunning());
  }

  private notRunning(): Error {
    return new SandboxNotRunningError(this.options.containerId, {
      cause: new SandboxError(`warden-helper channel closed: ${this.closedReason}`),
    });
  }

  private assertOpen(): void {
    if (this.closedReason !== null) throw this.notRunning();
  }
}
