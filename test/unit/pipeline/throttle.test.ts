import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { throttle } from "../../../src/pipeline/index.js";

describe("throttle", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("delivers the first value at once, then at most one per 100 ms, keeping the trailing value", () => {
    const seen: number[] = [];
    const t = throttle<number>((v) => seen.push(v), 100);
    t.push(1);
    t.push(2);
    t.push(3);
    expect(seen).toEqual([1]);
    vi.advanceTimersByTime(99);
    expect(seen).toEqual([1]);
    vi.advanceTimersByTime(1);
    expect(seen).toEqual([1, 3]);
    vi.advanceTimersByTime(1000);
    expect(seen).toEqual([1, 3]);
  });

  it("flush delivers a pending value now; cancel drops it", () => {
    const seen: number[] = [];
    const t = throttle<number>((v) => seen.push(v), 100);
    t.push(1);
    t.push(2);
    t.flush();
    expect(seen).toEqual([1, 2]);
    t.push(3);
    t.cancel();
    vi.advanceTimersByTime(500);
    expect(seen).toEqual([1, 2]);
  });

  it("spaces deliveries at least 100 ms apart: 11 deliveries (t = 0, 100, ..., 1000 ms) for 1 s of pushes", () => {
    const at: number[] = [];
    const start = Date.now();
    const t = throttle<number>(() => at.push(Date.now() - start), 100);
    for (let i = 0; i < 100; i++) {
      t.push(i);
      vi.advanceTimersByTime(10);
    }
    expect(at).toEqual([0, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000]);
  });
});
