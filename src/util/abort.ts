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
