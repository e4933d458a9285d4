/**
 * The bytes the test process holds live: V8 heap in use plus array buffers (Node's Buffers), after a
 * full garbage collection. Unlike RSS, this does not count garbage not yet collected or memory the
 * allocator keeps after a collection, which grow with the machine's load rather than with what the
 * code under test holds. `gc` is exposed at run time (v8 flag + a fresh context), so no Node option
 * is needed.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/**
 * Live heap + array-buffer bytes after a full collection. Twice: V8 frees array buffers' backing
 * stores in a sweep that may finish after gc() returns, so one collection can still count tens of
 * MiB of dead Buffers (seen here: 34 MiB once, 0.7 MiB after the second).
 */
export function liveBytes(): number {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}
