/**
 * A counting semaphore with a FIFO queue: at most `size` holders at once, later callers wait in
 * call order. Used to bound work that is memory-heavy per job (image decoding: src/tools/image-resize.ts),
 * where a batch of many calls must not run all its jobs at once.
 */
import { AbortError, onAbort, throwIfAborted } from "./abort.js";

/** See the module docstring. `acquire` resolves a release function; call it exactly once. */
export class Slots {
  #running = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(readonly size: number) {}

  /** Holders now. */
  get running(): number {
    return this.#running;
  }

  /** Callers waiting for a slot. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /**
   * Takes a slot: synchronously when one is free (so `running` counts the caller at once), else
   * after the callers before it. Rejects AbortError when `signal` fires while waiting (its place
   * is given up). The returned function gives the slot back; later calls of it do nothing.
   */
  acquire(signal?: AbortSignal): Promise<() => void> {
    throwIfAborted(signal);
    if (this.#running < this.size) {
      this.#running++;
      return Promise.resolve(this.#releaser());
    }
    return new Promise((resolve, reject) => {
      const grant = () => {
        unlisten();
        this.#running++;
        resolve(this.#releaser());
      };
      const unlisten = onAbort(signal, () => {
        const i = this.#waiting.indexOf(grant);
        if (i >= 0) this.#waiting.splice(i, 1);
        reject(new AbortError());
      });
      this.#waiting.push(grant);
    });
  }

  #releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#running--;
      this.#waiting.shift()?.();
    };
  }
}
