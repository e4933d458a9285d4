/**
 * WorkerPool: results, worker errors, the queue bound, abort of a running job, the worker process
 * (every thread at nice 19, a killed or idle one gone, none left after close), the heap cap.
 */
import { readdirSync, readFileSync } from "node:fs";
import { getPriority } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { WorkerJobError, WorkerPool, WorkerPoolFullError } from "../../../src/util/worker-pool.js";
import { workerModule } from "../../../src/util/worker-process.js";

// The jobs (a number, "spin", "pid", "busy", "grow", "throw") are the fixture module's.
const MODULE = workerModule(import.meta.url, "fixtures/pool-worker");

const pools: WorkerPool<unknown, unknown>[] = [];
function pool(size = 1, maxQueued = 1, idleMs = 60_000): WorkerPool<unknown, unknown> {
  const p = new WorkerPool<unknown, unknown>({ module: MODULE, size, maxQueued, idleMs, maxHeapMb: 64 });
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
  const nicesOf = (pid: number) =>
    readdirSync(`/proc/${pid}/task`).map((tid) => niceOf(`${pid}/task/${tid}`));
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ESRCH") return false;
      throw err;
    }
  };
  /** Polls until `what` holds (the test's timeout bounds it); resolves true. */
  const until = async (what: () => boolean) => {
    while (!what()) await new Promise((r) => setTimeout(r, 20));
    return what();
  };

  it.runIf(process.platform === "linux")(
    "runs jobs in a child process whose every thread is at nice 19, garbage collection's included",
    async () => {
      // Before, a worker thread of this process lowered itself only: V8's platform threads (which
      // collect the workers' garbage) and libuv's stayed at nice 0.
      const ownNices = nicesOf(process.pid);
      const p = pool();
      const pid = (await p.run("busy")) as number;
      expect(pid).not.toBe(process.pid);
      expect(getPriority(pid)).toBe(19);
      const nices = nicesOf(pid);
      expect(nices.length).toBeGreaterThan(4); // the main thread, V8's platform threads, libuv's pool
      expect(nices).toEqual(nices.map(() => 19));
      expect(nicesOf(process.pid)).toEqual(ownNices);
    },
  );

  it("rejects the running job of a killed worker process with WorkerJobError, and runs the next in a new one", async () => {
    const p = pool();
    const pid = (await p.run("pid")) as number;
    expect(pid).not.toBe(process.pid); // a worker process, not a thread here: killing it kills only it
    const job = p.run("spin");
    await new Promise((r) => setTimeout(r, 50));
    process.kill(pid, "SIGKILL");
    const err = await job.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkerJobError);
    expect(err).toMatchObject({
      message: "worker process exited during a job (signal SIGKILL)",
      code: undefined,
    });
    const next = (await p.run("pid")) as number;
    expect(next).not.toBe(pid);
    expect(p.workers).toBe(1);
  });

  it("keeps this process alive only while a job runs (an idle worker process is unref'd)", async () => {
    const workerHandles = () =>
      process.getActiveResourcesInfo().filter((r) => r === "ProcessWrap" || r === "PipeWrap").length;
    const before = workerHandles();
    const p = pool();
    expect(await p.run(1)).toBe(2);
    expect(p.workers).toBe(1);
    expect(workerHandles()).toBe(before);
    const controller = new AbortController();
    const spinning = p.run("spin", { signal: controller.signal });
    expect(workerHandles()).toBeGreaterThan(before);
    controller.abort();
    await expect(spinning).rejects.toMatchObject({ name: "AbortError" });
  });

  it("ends an idle worker process after idleMs", async () => {
    const p = pool(1, 1, 200);
    const pid = (await p.run("pid")) as number;
    expect(pid).not.toBe(process.pid);
    expect(alive(pid)).toBe(true);
    expect(await until(() => p.workers === 0 && !alive(pid))).toBe(true);
    expect(await p.run(4)).toBe(8);
  });

  it("leaves no worker process after close, and none of an aborted job", async () => {
    const p = pool(2, 1);
    const controller = new AbortController();
    const [idlePid, spinPid] = (await Promise.all([p.run("pid"), p.run("pid")])) as [number, number];
    expect(idlePid).not.toBe(spinPid);
    expect([idlePid, spinPid]).not.toContain(process.pid);
    const spinning = p.run("spin", { signal: controller.signal });
    await new Promise((r) => setTimeout(r, 50));
    controller.abort();
    await expect(spinning).rejects.toMatchObject({ name: "AbortError" });
    expect(await until(() => !alive(idlePid) || !alive(spinPid))).toBe(true);
    expect(p.workers).toBe(1);
    await p.close();
    expect(p.workers).toBe(0);
    expect([alive(idlePid), alive(spinPid)]).toEqual([false, false]);
  });

  it("rejects WorkerJobError ERR_WORKER_OUT_OF_MEMORY for a job past the heap cap, and runs the next", async () => {
    const p = pool();
    const err = await p.run("grow").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkerJobError);
    expect(err).toMatchObject({ code: "ERR_WORKER_OUT_OF_MEMORY" });
    expect((err as Error).message).toMatch(
      /^worker process ran out of memory \((signal SIGABRT|code \d+)\)$/,
    );
    expect(await p.run(3)).toBe(6);
  });

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
