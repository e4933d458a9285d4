/**
 * Backpressure from an exec output callback to the stream the exec path reads (ExecOptions.onStdout):
 * a callback that returns a promise (a full spill queue) pauses the reading until every such
 * promise has settled. Pure: the reader's pause and resume are passed in.
 */

/** Counts the promises one call's output callbacks returned; pauses at the first, resumes after the last. */
export class ReadHold {
  #holds = 0;
  #ended = false;

  /** `pause` and `resume` stop and restart the reading (each is called only on a change). */
  constructor(
    private readonly pause: () => void,
    private readonly resume: () => void,
  ) {}

  /** True while at least one returned promise is unsettled (and the hold has not ended). */
  get held(): boolean {
    return this.#holds > 0;
  }

  /**
   * Takes what an output callback returned: a promise (or thenable) pauses the reading until it
   * settles, fulfilled or rejected; anything else is ignored. Ignored once the hold has ended.
   */
  honour(result: unknown): void {
    if (this.#ended || !isThenable(result)) return;
    if (this.#holds++ === 0) this.pause();
    const settle = () => {
      if (this.#ended) return;
      if (--this.#holds === 0) this.resume();
    };
    result.then(settle, settle);
  }

  /** The call is over (exit, abort, close): resumes the reading if held; later settlements do nothing. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    const wasHeld = this.#holds > 0;
    this.#holds = 0;
    if (wasHeld) this.resume();
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === "object" || typeof value === "function") &&
    value !== null &&
    typeof (value as { then?: unknown }).then === "function"
  );
}
