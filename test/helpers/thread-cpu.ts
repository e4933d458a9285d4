/**
 * CPU time of the calling thread, from Linux's /proc/thread-self/schedstat (its first field: ns on
 * a CPU). Unlike wall time or performance.eventLoopUtilization (which counts a loop waiting for a
 * worker's large message as active), it is the event loop's own work, whatever else the machine
 * runs. Linux only: callers guard with `process.platform === "linux"`.
 */
import { readFileSync } from "node:fs";

/** CPU ms this thread spent while `run` ran, divided by `times` (run is called `times` times in order). */
export async function threadCpuMsPer(times: number, run: () => unknown): Promise<number> {
  const cpuNs = () => Number(readFileSync("/proc/thread-self/schedstat", "utf8").split(" ")[0]);
  const start = cpuNs();
  for (let i = 0; i < times; i++) await run();
  return (cpuNs() - start) / 1e6 / times;
}
