/** What carries the channel's bytes: the one interface each engine's transport implements. */

/** A byte pipe to the helper: frames out through `write`, raw bytes in through the sinks. */
export interface ChannelTransport {
  write(chunk: Buffer): void;
  /**
   * Starts delivery; `onData` gets the helper's frame bytes (already demuxed), `onClose` once,
   * with `lost` true when the connection was lost (the helper may still run: a new stream can
   * reach it) rather than ended by the helper or closed here.
   */
  start(sinks: { onData(chunk: Buffer): void; onClose(reason: string, lost?: boolean): void }): void;
  /** Closes the transport; `onClose` follows. */
  close(): void;
  /**
   * What carries the bytes, for logs and SandboxInfo ("attach", "socket", "exec-stream"); undefined
   * when unnamed (a switchable transport reports the current one's, which may have none).
   */
  readonly name?: string | undefined;
  /** Stops reading until `resume` (backpressure reaches the helper); optional. */
  pause?(): void;
  resume?(): void;
}
