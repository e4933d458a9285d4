/**
 * A fair share of the host for the bytes sandboxes send the controller (issue 11, noisy
 * neighbour). Every byte a command prints crosses warden-helper, containerd-shim, dockerd and the
 * controller's event loop, all on the same cores as every other session's calls: one session
 * printing 64 MiB as fast as it can made another tenant's `bash true` 13x slower at p99 on a 2-core
 * host. So while another session has a request in flight, each channel's incoming bytes are held
 * (or had one within CONTENDED_LINGER_MS), each channel's incoming bytes are held to a rate (a
 * token bucket with CONTENDED_BURST_MS of burst); past it the channel's transport is
 * paused, and the helper's end-to-end backpressure slows the command itself (its pipe fills, its
 * writes block). Alone, a session runs at full speed. No byte is dropped or reordered: only the
 * pace changes, so results are identical.
 */

/** Default rate of one channel's incoming bytes while another channel is busy: 16 MiB/s. */
export const DEFAULT_CONTENDED_OUTPUT_BYTES_PER_SECOND = 16 * 1024 * 1024;

/** Burst a channel may send at once before the rate applies, in ms worth of the rate. */
export const CONTENDED_BURST_MS = 100;

/**
 * A session's calls come one after another with short gaps (its client reads a result, sends the
 * next call), so a channel counts as busy for this long (ms) after its last request ended.
 */
export const CONTENDED_LINGER_MS = 1000;

/**
 * A channel taking part in the share: busy while it has a request in flight, and for
 * CONTENDED_LINGER_MS after the last one ended (`lastBusyAt`, on the share's clock, ms;
 * undefined while it has never been busy: a ChannelClient holds it so until its first request).
 */
export interface ShareMember {
  readonly inFlight: number;
  readonly lastBusyAt?: number | undefined;
}

/**
 * The channels of one process sharing the host. `bytesPerSecond` 0 turns the limit off. The
 * process-wide instance is `outputShare`; tests make their own.
 */
export class OutputShare {
  readonly #members = new Set<ShareMember>();

  constructor(public bytesPerSecond: number = DEFAULT_CONTENDED_OUTPUT_BYTES_PER_SECOND) {}

  /** Adds `member`; the returned meter paces its bytes. Call `leave` when the channel closes. */
  join(member: ShareMember, now: () => number = () => performance.now()): OutputMeter {
    this.#members.add(member);
    return new OutputMeter(this, member, now);
  }

  /** Removes `member` (idempotent). */
  leave(member: ShareMember): void {
    this.#members.delete(member);
  }

  /** True when a member other than `member` is busy at `now` (ms, the members' clock). */
  contended(member: ShareMember, now: number = performance.now()): boolean {
    for (const m of this.#members) {
      if (m === member) continue;
      if (m.inFlight > 0 || (m.lastBusyAt !== undefined && now - m.lastBusyAt < CONTENDED_LINGER_MS))
        return true;
    }
    return false;
  }
}

/** The token bucket of one channel. */
export class OutputMeter {
  #tokens: number;
  #last: number;

  constructor(
    private readonly share: OutputShare,
    private readonly member: ShareMember,
    private readonly now: () => number,
  ) {
    this.#tokens = this.#burst();
    this.#last = now();
  }

  /**
   * Counts `bytes` just received. Returns how long (ms) the channel should pause before reading
   * more: 0 while the share is uncontended or the bucket still holds tokens, else the time the
   * rate needs to pay back the debt.
   */
  take(bytes: number): number {
    const rate = this.share.bytesPerSecond;
    const t = this.now();
    const elapsed = t - this.#last;
    this.#last = t;
    if (rate <= 0 || !this.share.contended(this.member, t)) {
      this.#tokens = this.#burst();
      return 0;
    }
    this.#tokens = Math.min(this.#burst(), this.#tokens + (elapsed * rate) / 1000) - bytes;
    return this.#tokens >= 0 ? 0 : Math.ceil((-this.#tokens * 1000) / rate);
  }

  #burst(): number {
    return (this.share.bytesPerSecond * CONTENDED_BURST_MS) / 1000;
  }
}

/** The process-wide share every ChannelClient joins unless given another (`warden serve` sets its rate). */
export const outputShare = new OutputShare();
