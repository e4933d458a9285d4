/**
 * The warm pool: pre-started, hardened sandboxes per pool key (pool-key.ts), so a session starts
 * by claiming one instead of creating a container. A claim takes an idle entry of its key, hands
 * it over (the backend copies the workspace in) and refills the key in the background; with no
 * idle entry it creates one cold. `drain` stops refills and removes every idle entry; nothing is
 * left running. The Docker specifics live in a PoolBackend; this file is only the bookkeeping.
 * A spare the backend reports as finding no room (`noRoom`: no node takes its Pod) makes its key
 * back off (refill-backoff.ts): one spare at a time, after a doubling wait, until one starts; a
 * cold create that finds no room meanwhile is told to retry after that wait.
 */
import { NoRoomError } from "../../errors.js";
import type { Sandbox } from "../types.js";
import {
  nextRefillBackoffMs,
  REFILL_BACKOFF,
  type RefillBackoff,
  retryAfterSecondsOf,
} from "./refill-backoff.js";

/**
 * A claim whose hand-over failed within this many ms tries the next idle spare; a slower failure
 * sends it to a cold create, so a claim waits for at most one failing hand-over (the Kubernetes
 * backend's spare ping: 10 s), never one per spare.
 */
export const RETRY_SPARE_WITHIN_MS = 1000;

/** How a pool creates, hands over and discards its entries (`P` is one prepared container). */
export interface PoolBackend<Req, P> {
  /** The key of a request (see poolKey). Throws InvalidArgumentError for invalid options. */
  keyOf(request: Req): Promise<string>;
  /** Creates and starts one hardened sandbox for `request`'s key, with an empty workspace. */
  prepare(request: Req, signal: AbortSignal): Promise<P>;
  /** Hands `prepared` over to `request` (workspace copied in); it is then the caller's. */
  handOver(prepared: P, request: Req): Promise<Sandbox>;
  /** Creates a sandbox without the pool (the cold path). */
  createCold(request: Req): Promise<Sandbox>;
  /** True while `prepared` is still usable (container running, channel open). */
  alive(prepared: P): boolean;
  /** Removes `prepared`. Must not throw for an already removed one. */
  discard(prepared: P): Promise<void>;
  /**
   * When `err` (a rejection of `prepare`) says the cluster has no room for an entry now, the reason
   * (the scheduler's message); the key then backs off. Absent or undefined: an ordinary failure.
   */
  noRoom?(err: unknown): string | undefined;
}

/** Options of a WarmPool. */
export interface WarmPoolOptions<Req, P> {
  backend: PoolBackend<Req, P>;
  /** Idle entries kept per key once the key has been seen (warm() or claim()). Default 2; 0 disables refill. */
  size?: number;
  /**
   * Keys kept at once. A new key beyond this evicts the least recently used one (its idle entries
   * are removed), so varied requests (say, a tenant trying every memory limit) cannot pile up
   * spares. Default 8.
   */
  maxKeys?: number;
  /**
   * Idle entries older than this are replaced (ms), checked at claims and every maxIdleMs / 4.
   * Default 30 min (keep it below the backend's spare lifetime).
   */
  maxIdleMs?: number;
  /**
   * First wait after a failed refill before trying again (ms), doubling per failure of the key up to
   * `backoff.maxMs` (default 60 s) until a refill succeeds. Default 1000.
   */
  retryMs?: number;
  /** Waits of a key whose spares find no room (ms). Default REFILL_BACKOFF: 2 s doubling up to 60 s. */
  backoff?: RefillBackoff;
  /** Called once per back-off wait, with the key, the wait (ms) and the scheduler's reason. */
  onBackoff?: (key: string, waitMs: number, reason: string) => void;
  /** Diagnostics (refill failures, discarded entries). */
  log?: (message: string) => void;
}

/** Outcome of a claim: the sandbox, whether it came from the pool, and how long the claim took (ms). */
export interface ClaimResult {
  sandbox: Sandbox;
  pooled: boolean;
  claimMs: number;
}

interface Entry<P> {
  prepared: P;
  createdAt: number;
}

interface KeyState<Req, P> {
  request: Req;
  size: number;
  idle: Entry<P>[];
  filling: number;
  /** Set when the key was evicted: its fills in flight discard what they prepare. */
  evicted: boolean;
  /**
   * Set while the key backs off after a spare found no room: the wait (ms) and when it was set
   * (Date.now() ms). Meanwhile at most one fill runs; the first spare that starts clears it (undefined).
   */
  backoff?: { waitMs: number; setAt: number } | undefined;
  /**
   * Set while refills fail for another reason: the wait (ms) and when it was set; it doubles per
   * failure (a fill started before `setAt` does not double it) and ends (undefined) with the first success.
   */
  retry?: { waitMs: number; setAt: number } | undefined;
}

/** The pool. Create one per controller process; call `drain()` on shutdown. */
export class WarmPool<Req, P> {
  private readonly keys = new Map<string, KeyState<Req, P>>();
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly abort = new AbortController();
  private draining = false;
  private readonly reaper: NodeJS.Timeout;

  constructor(private readonly options: WarmPoolOptions<Req, P>) {
    // Stale or dead spares are replaced even when no claim comes; the timer never keeps a process alive.
    this.reaper = setInterval(() => this.replaceStale(), Math.max(1000, this.maxIdleMs() / 4));
    this.reaper.unref();
  }

  /** Keeps `size` (default: the pool's size) idle entries for `request`'s key, filling in the background. */
  async warm(request: Req, size?: number): Promise<void> {
    const key = await this.options.backend.keyOf(request);
    const state = this.stateOf(key, request);
    if (size !== undefined) state.size = size;
    this.refill(key);
  }

  /**
   * Resolves when no refill or discard is in flight, i.e. every key has its idle entries. A key
   * whose refills keep failing retries after a doubling wait, so this does not resolve until drain().
   * For tests and benchmarks.
   */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /**
   * A sandbox for `request`: an idle pooled one of the same key when there is one (the key is then
   * refilled in the background), else a cold one. Rejects with the backend's errors; a NoRoomError
   * of the cold create, while the key backs off, gets the back-off's wait as its retryAfterSeconds.
   */
  async claim(request: Req): Promise<ClaimResult> {
    const t0 = performance.now();
    const { backend } = this.options;
    const key = await backend.keyOf(request);
    const state = this.draining ? undefined : this.stateOf(key, request);
    let entry = state ? this.takeIdle(state) : undefined;
    while (state && entry) {
      const tried = performance.now();
      try {
        const sandbox = await backend.handOver(entry.prepared, request);
        this.refill(key);
        return { sandbox, pooled: true, claimMs: performance.now() - t0 };
      } catch (err) {
        this.options.log?.(`pool: hand-over failed, discarding the entry: ${(err as Error).message}`);
        this.discardInBackground(entry.prepared);
        // A slow failure (a spare that never answered its ping: a busy node, or spares all stopped
        // alike) says the next spare may fail as slowly: go cold instead of waiting once per spare.
        entry = performance.now() - tried < RETRY_SPARE_WITHIN_MS ? this.takeIdle(state) : undefined;
      }
    }
    if (state) this.refill(key);
    try {
      const sandbox = await backend.createCold(request);
      return { sandbox, pooled: false, claimMs: performance.now() - t0 };
    } catch (err) {
      // No room for a cold sandbox either: ask again when the key's spares will (HTTP Retry-After).
      if (err instanceof NoRoomError && state?.backoff)
        err.retryAfterSeconds ??= retryAfterSecondsOf(state.backoff.waitMs);
      throw err;
    }
  }

  /** Idle and filling counts per key; `backoffMs`, the current wait, while the key backs off. */
  stats(): { key: string; idle: number; filling: number; size: number; backoffMs?: number }[] {
    return [...this.keys].map(([key, s]) => ({
      key,
      idle: s.idle.length,
      filling: s.filling,
      size: s.size,
      ...(s.backoff ? { backoffMs: s.backoff.waitMs } : {}),
    }));
  }

  /** Stops refills, waits for those in flight, and removes every idle entry. Idempotent. */
  async drain(): Promise<void> {
    this.draining = true;
    clearInterval(this.reaper);
    this.abort.abort();
    await this.settled();
    const idle = [...this.keys.values()].flatMap((s) => s.idle.splice(0));
    await Promise.allSettled(idle.map((e) => this.options.backend.discard(e.prepared)));
  }

  /** The key's state, now the most recently used; a new key may evict the least recently used one. */
  private stateOf(key: string, request: Req): KeyState<Req, P> {
    let state = this.keys.get(key);
    if (state) {
      this.keys.delete(key); // re-inserted below: Map order is the LRU order
    } else {
      const maxKeys = Math.max(1, this.options.maxKeys ?? 8);
      for (const [oldest] of this.keys) {
        if (this.keys.size < maxKeys) break;
        this.evict(oldest);
      }
      state = { request, size: this.options.size ?? 2, idle: [], filling: 0, evicted: false };
    }
    this.keys.set(key, state);
    return state;
  }

  private evict(key: string): void {
    const state = this.keys.get(key);
    if (!state) return;
    this.keys.delete(key);
    state.evicted = true;
    for (const entry of state.idle.splice(0)) {
      this.discardInBackground(entry.prepared);
    }
    this.options.log?.(`pool: key ${key.slice(0, 19)}… evicted (more than maxKeys in use)`);
  }

  /** Discards `prepared` without waiting; settled() and drain() still wait for it. */
  private discardInBackground(prepared: P): void {
    const job = this.options.backend
      .discard(prepared)
      .catch(() => {})
      .finally(() => this.inFlight.delete(job));
    this.inFlight.add(job);
  }

  private maxIdleMs(): number {
    return this.options.maxIdleMs ?? 30 * 60_000;
  }

  private usable(entry: Entry<P>): boolean {
    return Date.now() - entry.createdAt <= this.maxIdleMs() && this.options.backend.alive(entry.prepared);
  }

  /** The newest usable idle entry; stale or dead ones are discarded on the way. */
  private takeIdle(state: KeyState<Req, P>): Entry<P> | undefined {
    for (let entry = state.idle.pop(); entry; entry = state.idle.pop()) {
      if (this.usable(entry)) return entry;
      this.discardInBackground(entry.prepared);
    }
    return undefined;
  }

  /** Discards the stale or dead idle entries of every key and refills those keys. */
  private replaceStale(): void {
    for (const [key, state] of this.keys) {
      const kept: Entry<P>[] = [];
      const stale: Entry<P>[] = [];
      for (const entry of state.idle) (this.usable(entry) ? kept : stale).push(entry);
      if (stale.length === 0) continue;
      state.idle = kept;
      for (const entry of stale) this.discardInBackground(entry.prepared);
      this.refill(key);
    }
  }

  private refill(key: string): void {
    const state = this.keys.get(key);
    if (!state || state.evicted || this.draining) return;
    // Backing off: one fill at a time (a spare that may again find no room); the fill that set the
    // back-off counts as filling while it waits, so the next one starts when the wait is over.
    const limit = state.backoff ? 1 : state.size;
    while (state.idle.length + state.filling < state.size && state.filling < limit) {
      state.filling++;
      // A throwing log or onBackoff must not leave the job in flight for ever (settled() would spin).
      const job = this.fillOne(key, state)
        .catch(() => {})
        .then(() => {
          state.filling--;
          this.inFlight.delete(job);
          this.refill(key);
        });
      this.inFlight.add(job);
    }
  }

  /**
   * Prepares one entry. On failure waits `retryMs`, doubling per failure of the key, or, when the backend says there was no room,
   * starts or doubles the key's back-off and waits it out (unless a fill started before the
   * back-off already does); the caller refills again after.
   */
  private async fillOne(key: string, state: KeyState<Req, P>): Promise<void> {
    const { backend } = this.options;
    const startedAt = Date.now();
    try {
      const prepared = await backend.prepare(state.request, this.abort.signal);
      if (this.draining || state.evicted) await backend.discard(prepared).catch(() => {});
      else state.idle.push({ prepared, createdAt: Date.now() });
      state.backoff = undefined;
      state.retry = undefined;
    } catch (err) {
      if (this.draining || state.evicted) return;
      const reason = backend.noRoom?.(err);
      if (reason === undefined) {
        // Doubling too: a spare that cannot start (a bad image, a refused spec) would otherwise be
        // created and deleted every retryMs, for ever.
        // Fills that started before the last failure was counted fail alike: they wait, not double.
        if (!state.retry || startedAt >= state.retry.setAt) {
          const retryMs = this.options.retryMs ?? 1000;
          const maxMs = Math.max(retryMs, this.options.backoff?.maxMs ?? REFILL_BACKOFF.maxMs);
          const waitMs = nextRefillBackoffMs(state.retry?.waitMs, { firstMs: retryMs, maxMs });
          state.retry = { waitMs, setAt: Date.now() };
        }
        const { waitMs } = state.retry;
        this.options.log?.(`pool: refill failed, retrying in ${waitMs / 1000} s: ${(err as Error).message}`);
        return this.sleep(waitMs);
      }
      // A fill started before the current back-off found no room for the same reason: not news.
      if (state.backoff && startedAt < state.backoff.setAt) return;
      const waitMs = nextRefillBackoffMs(state.backoff?.waitMs, this.options.backoff);
      state.backoff = { waitMs, setAt: Date.now() };
      this.options.log?.(
        `pool: no room for a spare of key ${key.slice(0, 19)}… (the scheduler: "${reason}"); spare withdrawn, next try in ${waitMs / 1000} s`,
      );
      this.options.onBackoff?.(key, waitMs, reason);
      return this.sleep(waitMs);
    }
  }

  /** Waits `ms`, or less when the pool drains. */
  private sleep(ms: number): Promise<void> {
    const { signal } = this.abort;
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        resolve();
      }
      signal.addEventListener("abort", done, { once: true });
    });
  }
}
