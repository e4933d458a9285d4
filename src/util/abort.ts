/** The one shared AbortSignal helper: every async API in warden takes a signal and uses these. */

/** Thrown (with `name === "AbortError"`) when an operation stops because its signal fired. */
export class AbortError extends Error {
  constructor(message = "Operation aborted") {
    super(message);
    this.name = "AbortError";
  }
}

/** Throws AbortError if `signal` has already fired. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new AbortError();
}

/**
 * Runs `onAbort` once when `signal` fires (immediately if it already has). Returns a function
 * that removes the listener; call it when the operation ends so nothing leaks.
 */
export function onAbort(signal: AbortSignal | undefined, onAbort: () => void): () => void {
  if (!signal) return () => {};
  if (signal.aborted) {
    onAbort();
    return () => {};
  }
  signal.addEventListener("abort", onAbort, { once: true });
  return () => signal.removeEventListener("abort", onAbort);
}

/** True for the errors an aborted operation throws (ours and the platform's). */
export function isAbortError(err: unknown): boolean {
  return err instanceof Error && (err.name === "AbortError" || err instanceof AbortError);
}

/** One parent signal shared by many operations: see abortFanOut. */
export interface AbortFanOut {
  /** A new signal that fires when the parent does (already fired if it has). */
  child(): AbortSignal;
  /** Removes the one listener on the parent; call it when the operations have ended. Idempotent. */
  dispose(): void;
}

/**
 * Gives each of many concurrent operations its own signal that follows `parent`, with ONE
 * listener on `parent` however many there are. A batch of N calls that each listened on the
 * batch's signal put N listeners on it at once (Node warns past 10, MaxListenersExceededWarning);
 * each call's listeners now sit on its own child signal, and the parent keeps one until dispose.
 */
export function abortFanOut(parent: AbortSignal | undefined): AbortFanOut {
  const children = new Set<AbortController>();
  const unlisten = onAbort(parent, () => {
    for (const c of children) c.abort(parent?.reason);
    children.clear();
  });
  return {
    child() {
      const controller = new AbortController();
      if (parent?.aborted) controller.abort(parent.reason);
      else if (parent) children.add(controller);
      return controller.signal;
    },
    dispose() {
      unlisten();
      children.clear();
    },
  };
}
