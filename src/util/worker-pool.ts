/**
 * A small bounded pool of worker processes (worker-process.ts: child `node` processes, every thread
 * at nice 19) for CPU-heavy pure functions, so one request's work never holds the event loop, and
 * none of its CPU, garbage collection included, is taken at the event loop's priority. A worker
 * runs a worker module (a file of its own, e.g. line-diff-worker.ts; worker-process.ts's
 * workerModule) whose `runJob(input)` does one job; inputs and values cross as structured clones
 * ("advanced" IPC serialization). At most
 * `size` workers run; jobs beyond them wait in a queue of at most `maxQueued`. Idle workers are
 * unref'd (they never keep the process alive) and exit after `idleMs`, so their memory returns;
 * each has a heap cap (`maxHeapMb`) so one job cannot grow without bound. A worker that dies fails
 * its job (WorkerJobError) and the next job starts a new one.
 */
import type { Serializable } from "node:child_process";
import { availableParallelism } from "node:os";
import { AbortError, isAbortError, onAbort, throwIfAborted } from "./abort.js";
import {
  refWorkerProcess,
  startWorkerProcess,
  unrefWorkerProcess,
  type WorkerProcess,
} from "./worker-process.js";

/** Shape and limits of a pool. */
export interface WorkerPoolOptions {
  /** The worker module each worker runs (worker-process.ts's workerModule). */
  module: URL;
  /** Most workers at once (>= 1). */
  size: number;
  /** Most jobs waiting for a worker; `run` rejects WorkerPoolFullError beyond it. */
  maxQueued: number;
  /** An idle worker exits after this many ms. */
  idleMs: number;
  /** Old-generation heap cap of each worker, MiB (`--max-old-space-size`). */
  maxHeapMb: number;
}

/** The queue of a pool is full (`maxQueued` jobs waiting); nothing was run. */
export class WorkerPoolFullError extends Error {
  readonly code = "WORKER_POOL_FULL";
  constructor(readonly maxQueued: number) {
    super(`worker pool queue is full (${maxQueued} jobs waiting)`);
    this.name = "WorkerPoolFullError";
  }
}

/** A worker failed a job: it threw (`message`), or died (out of memory: code ERR_WORKER_OUT_OF_MEMORY). */
export class WorkerJobError extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
    this.name = "WorkerJobError";
  }
}

interface Job {
  input: unknown;
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
  detach: () => void;
}

interface Slot {
  worker: WorkerProcess;
  /** The job it runs; set back to undefined when the worker is released or killed. */
  job?: Job | undefined;
  idleTimer?: NodeJS.Timeout;
  dead: boolean;
  /** Resolves when the worker process has exited. */
  exited: Promise<void>;
}

type Reply = { ok: boolean; value?: unknown; message?: string };

/** See the module docstring. `run` resolves the worker's value; `close` ends every worker. */
export class WorkerPool<In, Out> {
  readonly #options: WorkerPoolOptions;
  readonly #idle: Slot[] = [];
  readonly #slots = new Set<Slot>();
  readonly #queue: Job[] = [];

  constructor(options: WorkerPoolOptions) {
    this.#options = { ...options, size: Math.max(1, options.size) };
  }

  /** Workers alive now (busy or idle), for tests and metrics. */
  get workers(): number {
    return this.#slots.size;
  }

  /**
   * Runs one job. Rejects WorkerPoolFullError when the queue is full, AbortError when `signal` fires
   * (a running worker is killed, so its CPU is freed at once), WorkerJobError when the worker threw
   * or died.
   */
  run(input: In, options: { signal?: AbortSignal } = {}): Promise<Out> {
    throwIfAborted(options.signal);
    const free = this.#idle.length > 0 || this.#slots.size < this.#options.size;
    if (!free && this.#queue.length >= this.#options.maxQueued) {
      return Promise.reject(new WorkerPoolFullError(this.#options.maxQueued));
    }
    return new Promise<Out>((resolve, reject) => {
      const job: Job = { input, resolve: resolve as (v: unknown) => void, reject, detach: () => {} };
      job.detach = onAbort(options.signal, () => this.#abort(job));
      this.#queue.push(job);
      this.#pump();
    });
  }

  /** Kills every worker and waits for their exit; queued and running jobs reject AbortError. */
  async close(): Promise<void> {
    for (const job of this.#queue.splice(0)) this.#settle(job, new AbortError("worker pool closed"));
    await Promise.all([...this.#slots].map((slot) => this.#kill(slot, new AbortError("worker pool closed"))));
  }

  #pump(): void {
    while (this.#queue.length > 0) {
      const slot = this.#idle.pop() ?? (this.#slots.size < this.#options.size ? this.#spawn() : undefined);
      if (!slot) return;
      const job = this.#queue.shift()!;
      clearTimeout(slot.idleTimer);
      slot.job = job;
      refWorkerProcess(slot.worker.child);
      try {
        slot.worker.child.send(job.input as Serializable);
      } catch (err) {
        // An input the structured clone refuses (a function, say): that job fails, the worker stays.
        this.#release(slot);
        this.#settle(job, new WorkerJobError(`worker job input not sent: ${(err as Error).message}`));
      }
    }
  }

  #spawn(): Slot {
    const worker = startWorkerProcess(this.#options.module, this.#options.maxHeapMb);
    const { child } = worker;
    let exited: () => void = () => {};
    const slot: Slot = { worker, dead: false, exited: new Promise((resolve) => (exited = resolve)) };
    this.#slots.add(slot);
    child.on("message", (reply: Reply) => {
      const job = slot.job;
      if (!job || slot.dead) return;
      this.#release(slot);
      if (reply.ok) this.#settle(job, undefined, reply.value);
      else this.#settle(job, new WorkerJobError(reply.message ?? "worker job failed"));
      this.#pump();
    });
    // "close" (after "exit") comes once stderr is read to its end, so its tail says why it died.
    child.on("close", (code, signal) => {
      exited();
      void this.#kill(slot, deathError(worker, code, signal));
    });
    child.on("error", (err: Error) => {
      if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) exited();
      void this.#kill(slot, new WorkerJobError(`worker process failed: ${err.message}`));
    });
    return slot;
  }

  /** Makes a worker idle again (unref'd, with its idle timer). */
  #release(slot: Slot): void {
    slot.job = undefined;
    unrefWorkerProcess(slot.worker.child);
    slot.idleTimer = setTimeout(() => void this.#kill(slot), this.#options.idleMs).unref();
    this.#idle.push(slot);
  }

  #settle(job: Job, err: Error | undefined, value?: unknown): void {
    job.detach();
    if (err) job.reject(err);
    else job.resolve(value);
  }

  async #kill(slot: Slot, reason?: Error): Promise<void> {
    if (!slot.dead) {
      slot.dead = true;
      clearTimeout(slot.idleTimer);
      this.#slots.delete(slot);
      const at = this.#idle.indexOf(slot);
      if (at !== -1) this.#idle.splice(at, 1);
      const job = slot.job;
      slot.job = undefined;
      if (job) this.#settle(job, reason ?? new WorkerJobError("worker ended"));
      slot.worker.child.kill("SIGKILL");
      this.#pump();
    }
    await slot.exited;
  }

  #abort(job: Job): void {
    const queued = this.#queue.indexOf(job);
    if (queued !== -1) {
      this.#queue.splice(queued, 1);
      this.#settle(job, new AbortError());
      return;
    }
    for (const slot of this.#slots) if (slot.job === job) void this.#kill(slot, new AbortError());
  }
}

/**
 * The WorkerJobError of a worker process that ended by itself (`code`, `signal` of its exit):
 * ERR_WORKER_OUT_OF_MEMORY when its stderr reports the heap cap reached.
 */
function deathError(
  worker: WorkerProcess,
  code: number | null,
  signal: NodeJS.Signals | null,
): WorkerJobError {
  const how = signal ? `signal ${signal}` : `code ${code}`;
  const tail = worker.stderrTail();
  if (/heap out of memory|Reached heap limit/i.test(tail)) {
    return new WorkerJobError(`worker process ran out of memory (${how})`, "ERR_WORKER_OUT_OF_MEMORY");
  }
  return new WorkerJobError(`worker process exited during a job (${how})`);
}

/**
 * A process-wide pool created on first use, of the shape warden's CPU-heavy helpers share:
 * min(2, cores - 1) workers (at least 1), `maxQueued` waiting jobs, 10 s idle, 512 MiB heap each.
 */
export function lazySharedPool<In, Out>(module: URL, maxQueued: number): () => WorkerPool<In, Out> {
  let pool: WorkerPool<In, Out> | undefined;
  return () => {
    pool ??= new WorkerPool<In, Out>({
      module,
      size: Math.max(1, Math.min(2, availableParallelism() - 1)),
      maxQueued,
      idleMs: 10_000,
      maxHeapMb: 512,
    });
    return pool;
  };
}

/**
 * `pool.run(input)` for work that has a fallback on the calling thread: undefined when the pool
 * cannot do it (queue full, the worker threw or died: WorkerPoolFullError, WorkerJobError).
 * Rejects only AbortError when `signal` fires.
 */
export async function runOrFallBack<In, Out>(
  pool: WorkerPool<In, Out>,
  input: In,
  signal?: AbortSignal,
): Promise<Out | undefined> {
  try {
    return await pool.run(input, signal ? { signal } : {});
  } catch (err) {
    if (isAbortError(err)) throw err;
    return undefined;
  }
}
