/**
 * Rate limiting of streamed partial results (the pipeline's tool_execution_update events, bash's live tail):
 * at most one call per `intervalMs` (default 100 ms, i.e. 10 per second, Pi's bash update cadence). The
 * latest value inside a window is kept and delivered when the window ends (trailing update), or at once
 * by `flush()`.
 */

/** A throttled callback: `push` offers a value, `flush` delivers a pending one now, `cancel` drops it. */
export interface Throttled<T> {
  push(value: T): void;
  flush(): void;
  cancel(): void;
}

/** Wraps `deliver` so it runs at most once per `intervalMs` ms, keeping the trailing value. */
export function throttle<T>(deliver: (value: T) => void, intervalMs = 100): Throttled<T> {
  let lastAt = Number.NEGATIVE_INFINITY;
  let pending: { value: T } | undefined;
  let timer: NodeJS.Timeout | undefined;

  const fire = (): void => {
    timer = undefined;
    if (!pending) return;
    const { value } = pending;
    pending = undefined;
    lastAt = Date.now();
    deliver(value);
  };

  return {
    push(value) {
      pending = { value };
      if (timer) return;
      const waitMs = lastAt + intervalMs - Date.now();
      if (waitMs <= 0) fire();
      else timer = setTimeout(fire, waitMs);
    },
    flush() {
      if (timer) clearTimeout(timer);
      fire();
    },
    cancel() {
      if (timer) clearTimeout(timer);
      timer = undefined;
      pending = undefined;
    },
  };
}
