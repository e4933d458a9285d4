/**
 * Demultiplexer for Docker's non-TTY attach/exec stream (Docker Engine API "Stream format"):
 * each frame is an 8-byte header [stream type (1 stdout, 2 stderr), 0, 0, 0, big-endian uint32
 * length] followed by that many payload bytes. Headers and payloads may be split across chunks
 * arbitrarily; this keeps at most one partial header buffered and forwards payload slices as they
 * arrive, so no frame header byte ever reaches the callbacks and output is never accumulated.
 */

/** Receives payload slices; type 0 (stdin echo) is ignored. */
export interface DemuxSinks {
  onStdout?: (chunk: Buffer) => void;
  onStderr?: (chunk: Buffer) => void;
}

const HEADER_BYTES = 8;

/** Incremental demuxer: call `push` with each raw chunk in order. */
export class StreamDemuxer {
  private header = Buffer.alloc(HEADER_BYTES);
  private headerFill = 0;
  private remaining = 0;
  private streamType = 0;

  constructor(private readonly sinks: DemuxSinks) {}

  /** Feeds one raw chunk from the engine. */
  push(chunk: Buffer): void {
    let pos = 0;
    while (pos < chunk.length) {
      if (this.remaining === 0) {
        const take = Math.min(HEADER_BYTES - this.headerFill, chunk.length - pos);
        chunk.copy(this.header, this.headerFill, pos, pos + take);
        this.headerFill += take;
        pos += take;
        if (this.headerFill < HEADER_BYTES) return;
        this.headerFill = 0;
        this.streamType = this.header[0] ?? 0;
        this.remaining = this.header.readUInt32BE(4);
        continue;
      }
      const take = Math.min(this.remaining, chunk.length - pos);
      const body = chunk.subarray(pos, pos + take);
      pos += take;
      this.remaining -= take;
      if (this.streamType === 1) this.sinks.onStdout?.(body);
      else if (this.streamType === 2) this.sinks.onStderr?.(body);
    }
  }

  /** True when the stream stopped mid-frame (the engine cut it short). */
  get partial(): boolean {
    return this.remaining > 0 || this.headerFill > 0;
  }
}
