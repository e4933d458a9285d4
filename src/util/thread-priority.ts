/**
 * Lowers the CPU priority of a server process's helper threads, so its event loop runs first.
 *
 * A Node process runs JavaScript on its main thread only. Its other threads are V8's platform
 * threads (concurrent garbage-collection marking and sweeping, background compilation), the
 * platform's task scheduler, the SIGUSR1 watchdog and, once any asynchronous file or DNS call ran,
 * libuv's thread pool. Under one tenant's `/changes` load the platform threads' marking and
 * sweeping took 0.2–0.4 of a core at the event loop's priority on the 2-core bench machine, and
 * another tenant's requests waited for them (issue 11, `npm run bench noisy-neighbour`).
 *
 * On Linux, setpriority(2) with a thread id changes that one thread's nice value (its man page:
 * under NPTL "the nice value is a per-thread attribute"; Node's os.setPriority calls
 * uv_os_setpriority, which calls setpriority(PRIO_PROCESS, id)). A nice value ranks a thread only
 * among the threads of its scheduling group (its autogroup or cgroup, sched(7)): lowered threads
 * yield to the event loop, not to other processes, so the server's share of the machine against
 * the sandboxes is unchanged. Threads started later inherit the nice of the thread that starts
 * them (the main thread: unchanged).
 */
import { readdirSync } from "node:fs";
import { setPriority } from "node:os";
import { WORKER_NICE } from "./worker-process.js";

/** The nice value `lowerHelperThreads` gives: the worker processes' (19, the lowest priority). */
export const HELPER_THREAD_NICE = WORKER_NICE;

/**
 * The thread ids of `tids` (names under /proc/<pid>/task) other than the main thread `mainTid`
 * (whose id is the process id), as numbers, in order.
 */
export function helperThreadIds(tids: readonly string[], mainTid: number): number[] {
  return tids.map(Number).filter((tid) => Number.isInteger(tid) && tid > 0 && tid !== mainTid);
}

/**
 * Sets every thread of this process except the main one to nice HELPER_THREAD_NICE (see the module
 * docstring). Returns the thread ids lowered; [] where there is no /proc/self/task (not Linux). A
 * thread that exited meanwhile, or a call the system refuses, is skipped: the threads keep their
 * priority then, which is what they had before, never a higher one.
 */
export function lowerHelperThreads(): number[] {
  let tids: string[];
  try {
    tids = readdirSync("/proc/self/task");
  } catch {
    return [];
  }
  const lowered: number[] = [];
  for (const tid of helperThreadIds(tids, process.pid)) {
    try {
      setPriority(tid, HELPER_THREAD_NICE);
      lowered.push(tid);
    } catch {
      // Exited since the listing, or not allowed: it keeps its priority.
    }
  }
  return lowered;
}
