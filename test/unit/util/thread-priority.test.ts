/**
 * util/thread-priority.ts: which threads are a process's helper threads, and that lowering them
 * leaves the main thread (the event loop) at its priority (Linux: nice values read from /proc).
 */
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  HELPER_THREAD_NICE,
  helperThreadIds,
  lowerHelperThreads,
} from "../../../src/util/thread-priority.js";

/** The nice value of thread `tid` of this process (field 19 of /proc/self/task/<tid>/stat). */
function niceOf(tid: number): number {
  const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]);
}

describe("helperThreadIds", () => {
  it("is every thread id but the main thread's, as numbers in order", () => {
    expect(helperThreadIds(["4100", "4101", "4107", "4102"], 4100)).toEqual([4101, 4107, 4102]);
  });

  it("skips names that are not thread ids", () => {
    expect(helperThreadIds(["7", ".", "x1", "0", "8"], 7)).toEqual([8]);
  });
});

describe.runIf(process.platform === "linux")("lowerHelperThreads", () => {
  it("sets every other thread to nice 19 and leaves the main thread as it was", () => {
    const mainBefore = niceOf(process.pid);
    const lowered = lowerHelperThreads();
    const others = helperThreadIds(readdirSync("/proc/self/task"), process.pid);
    // V8 starts its platform threads (4 by default) before any script runs.
    expect(lowered.length).toBeGreaterThanOrEqual(4);
    expect(lowered).not.toContain(process.pid);
    expect(niceOf(process.pid)).toBe(mainBefore);
    expect(others.filter((tid) => lowered.includes(tid)).map(niceOf)).toEqual(
      others.filter((tid) => lowered.includes(tid)).map(() => HELPER_THREAD_NICE),
    );
  });
});
