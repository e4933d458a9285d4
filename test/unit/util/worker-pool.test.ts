/** WorkerPool: results, worker errors, the queue bound, abort of a running job, worker priority. */
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { WorkerJobError, WorkerPool, WorkerPoolFullError } from "../../../src/util/worker-pool.js";

const SOURCE = `
const { parentPort } = require("node:worker_threads");
parentPort.on("message", (job) => {
  if (job === "spin") for (;;) {}
  if (job === "tid") return parentPort.postMessage({ ok: true, value: require("node:fs").readlinkSync("/proc/thread-self") });
  if (job === "throw") return parentPort.postMessage({ ok: false, message: "boom" });
  parentPort.postMessage({ ok: true, value: job * 2 });
});
`;

const pools: WorkerPool<unknown, unknown>[] = [];
function pool(size = 1, maxQueued = 1): WorkerPool<unknown, unknown> {
  const p = new WorkerPool<unknown, unknown>({
    source: SOURCE,
    size,
    maxQueued,
    idleMs: 60_000,
    maxHeapMb: 64,
  });
  pools.push(p);
  return p;
}
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

describe("WorkerPool", () => {
  it("runs jobs in workers and reuses an idle worker", async () => {
    const p = pool();
    expect(await p.run(21)).toBe(42);
    expect(await p.run(2)).toBe(4);
    expect(p.workers).toBe(1);
  });

  it("fails a job whose input cannot be sent (structured clone) and keeps the worker for the next", async () => {
    // Before, the failed postMessage left the worker holding that job: the pool hung.
    const p = pool();
    await expect(p.run({ f: () => 1 })).rejects.toThrow(WorkerJobError);
    expect(await p.run(5)).toBe(10);
    expect(p.workers).toBe(1);
  });

  // The nice value of a thread, field 19 of /proc/<pid>/task/<tid>/stat (fields after the ")" of
  // the command name start at field 3).
  const niceOf = (taskPath: string) => {
    const stat = readFileSync(`/proc/${taskPath}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19 - 3]);
  };

  it.runIf(process.platform === "linux")(
    "runs its worker threads at nice 19 and leaves the main thread's priority alone",
    async () => {
      const mainNice = niceOf("thread-self");
      const p = pool();
      const task = (await p.run("tid")) as string; // "<pid>/task/<tid>"
      expect(task).toMatch(new RegExp(`^${process.pid}/task/\\d+$`));
      expect(niceOf(task)).toBe(19);
      expect(niceOf("thread-self")).toBe(mainNice);
    },
  );

  it("rejects WorkerJobError with the worker's message", async () => {
    const p = pool();
    await expect(p.run("throw")).rejects.toThrow(new WorkerJobError("boom"));
    expect(await p.run(1)).toBe(2);
  });

  it("rejects WorkerPoolFullError beyond maxQueued waiting jobs, naming the bound", async () => {
    const p = pool(1, 1);
    const controller = new AbortController();
    const running = p.run("spin", { signal: controller.signal });
    const queued = p.run(1);
    const err = await p.run(2).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkerPoolFullError);
    expect((err as WorkerPoolFullError).message).toBe("worker pool queue is full (1 jobs waiting)");
    controller.abort();
    await expect(running).rejects.toMatchObject({ name: "AbortError" });
    expect(await queued).toBe(2);
  });

  it("terminates the worker of an aborted running job, so its CPU is freed", async () => {
    const p = pool();
    const controller = new AbortController();
    const job = p.run("spin", { signal: controller.signal });
    await new Promise((r) => setTimeout(r, 50));
    expect(p.workers).toBe(1);
    controller.abort();
    await expect(job).rejects.toMatchObject({ name: "AbortError" });
    expect(p.workers).toBe(0);
    expect(await p.run(5)).toBe(10);
  });
});
