/**
 * Frame codec of warden's exec channel (the controller end; the helper's is
 * images/sandbox/helper/frame.go). Every message is
 *
 *   [u32 BE payload length][u8 type][u32 BE request id][payload]
 *
 * so the reader always knows where a frame ends: bytes a command prints travel only inside a
 * payload and can never be taken for a header. Payloads are at most 64 MiB; a larger length means
 * a corrupt stream and is an error, never an allocation.
 */
import { SandboxError } from "../../../errors.js";

/** Bytes before each payload. */
export const HEADER_BYTES = 9;

/** Largest payload of one frame, in bytes (64 MiB). */
export const MAX_PAYLOAD_BYTES = 64 * 1024 * 1024;

/** Frame types: 0x0_ controller to helper, 0x4_ helper to controller. */
export const FrameType = {
  ping: 0x01,
  exec: 0x02,
  kill: 0x03,
  read: 0x04,
  write: 0x05,
  stat: 0x06,
  realpath: 0x07,
  listDir: 0x08,
  untar: 0x09,
  switch: 0x0a,
  /** Starts a background process's shim (protocol version 9; procs.ts). */
  spawn: 0x0b,
  /** The shims the helper keeps through its stray sweep (version 9; procs.ts). */
  keep: 0x0c,
  pong: 0x41,
  stdout: 0x42,
  stderr: 0x43,
  exit: 0x44,
  result: 0x45,
  error: 0x46,
} as const;

export type FrameTypeCode = (typeof FrameType)[keyof typeof FrameType];

/** One decoded frame. `payload` may share memory with the chunk it came from. */
export interface Frame {
  type: number;
  id: number;
  payload: Buffer;
}

/** Encodes one frame (header and payload in one buffer, so it goes out in one write). */
export function encodeFrame(type: FrameTypeCode, id: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  if (payload.length > MAX_PAYLOAD_BYTES) {
    throw new SandboxError(
      `Channel frame of ${payload.length} bytes exceeds the ${MAX_PAYLOAD_BYTES}-byte limit; send less data per call.`,
    );
  }
  const out = Buffer.allocUnsafe(HEADER_BYTES + payload.length);
  out.writeUInt32BE(payload.length, 0);
  out.writeUInt8(type, 4);
  out.writeUInt32BE(id >>> 0, 5);
  payload.copy(out, HEADER_BYTES);
  return out;
}

/** Payload of JSON followed by raw bytes: [u32 BE json length][json][data]. */
export function encodeJsonData(json: unknown, data: Buffer = Buffer.alloc(0)): Buffer {
  const text = Buffer.from(JSON.stringify(json), "utf8");
  const out = Buffer.allocUnsafe(4 + text.length + data.length);
  out.writeUInt32BE(text.length, 0);
  text.copy(out, 4);
  data.copy(out, 4 + text.length);
  return out;
}

/** Splits a [u32 json length][json][data] payload. Throws SandboxError when malformed. */
export function decodeJsonData(payload: Buffer): { json: unknown; data: Buffer } {
  if (payload.length < 4)
    throw new SandboxError("Malformed channel payload: shorter than its length prefix.");
  const n = payload.readUInt32BE(0);
  if (n > payload.length - 4)
    throw new SandboxError("Malformed channel payload: JSON length exceeds the frame.");
  return { json: JSON.parse(payload.toString("utf8", 4, 4 + n)), data: payload.subarray(4 + n) };
}

/**
 * Incremental decoder: `push` raw chunks in order; `onFrame` is called once per complete frame.
 * Holds at most one incomplete frame. Throws SandboxError on a length over MAX_PAYLOAD_BYTES
 * (the stream is then unusable).
 */
export class FrameDecoder {
  private chunks: Buffer[] = [];
  private buffered = 0;

  constructor(private readonly onFrame: (frame: Frame) => void) {}

  /** Bytes held for an incomplete frame. */
  get pendingBytes(): number {
    return this.buffered;
  }

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    while (this.buffered >= HEADER_BYTES) {
      const head = this.peek(HEADER_BYTES);
      const length = head.readUInt32BE(0);
      if (length > MAX_PAYLOAD_BYTES) {
        throw new SandboxError(
          `Corrupt channel stream: frame length ${length} exceeds ${MAX_PAYLOAD_BYTES}; the helper output is out of sync.`,
        );
      }
      if (this.buffered < HEADER_BYTES + length) return;
      const whole = this.take(HEADER_BYTES + length);
      this.onFrame({ type: whole[4] ?? 0, id: whole.readUInt32BE(5), payload: whole.subarray(HEADER_BYTES) });
    }
  }

  /** The first `n` buffered bytes, without consuming them. */
  private peek(n: number): Buffer {
    const first = this.chunks[0]!;
    if (first.length >= n) return first.subarray(0, n);
    return this.copyOut(n, false);
  }

  /** Removes and returns the first `n` buffered bytes (no copy when one chunk holds them). */
  private take(n: number): Buffer {
    const first = this.chunks[0]!;
    if (first.length < n) return this.copyOut(n, true);
    if (first.length === n) this.chunks.shift();
    else this.chunks[0] = first.subarray(n);
    this.buffered -= n;
    return first.subarray(0, n);
  }

  /** Copies the first `n` buffered bytes (which span chunks) into one buffer, optionally consuming them. */
  private copyOut(n: number, consume: boolean): Buffer {
    const out = Buffer.allocUnsafe(n);
    let filled = 0;
    let i = 0;
    while (filled < n) {
      const chunk = this.chunks[i]!;
      const used = Math.min(chunk.length, n - filled);
      chunk.copy(out, filled, 0, used);
      filled += used;
      if (consume && used === chunk.length) this.chunks.shift();
      else if (consume) this.chunks[0] = chunk.subarray(used);
      else i++;
    }
    if (consume) this.buffered -= n;
    return out;
  }
}
