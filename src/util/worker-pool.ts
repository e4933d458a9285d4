/**
 * A small bounded pool of worker threads (node:worker_threads) for CPU-heavy pure functions, so one
 * request's work never holds the event loop. Workers run `source` (CommonJS, `eval: true`) which must
 * answer each message `input` with `{ ok: true, value }` or `{ ok: false, message }`, one job at a
 * time. At most `size` workers run; jobs beyond them wait in a queue of at most `maxQueued`.
 * Idle workers are unref'd (they never keep the process alive) and exit after `idleMs`, so their
 * memory returns; each has a heap cap (`maxHeapMb`) so one job cannot grow the process without bound.
 * Each worker thread runs at the lowest CPU priority (LOW_PRIORITY_PROLOGUE), so on a busy machine the
 * event loop's request handling always wins over one tenant's diff.
 */
import { availableParallelism } from "node:os";
import { type TransferListItem, Worker } from "node:worker_threads";
import { AbortError, isAbortError, onAbort, throwIfAborted } from "./abort.js";

/**
 * CommonJS prologue that lowers the calling worker thread's CPU priority to nice 19 (the lowest).
 * On Linux, `/proc/thread-self` links to `<pid>/task/<tid>` and setpriority(2) on a thread id
 * changes that thread only, so the main thread (the event loop) keeps its priority. Raising a nice
 * value needs no privilege; where /proc or setpriority is missing (not Linux), the prologue does
 * nothing. On a machine whose cores are all busy (one tenant's large diffs, sandboxes, other
 * tenants), the kernel then runs the event loop first whenever it is ready: another tenant's request
 * waits for the loop, never for a diff (issue 11, the noisy-neighbour bench).
 */
export const LOW_PRIORITY_PROLOGUE = `
try {
  const tid = Number(require("node:fs").readlinkSync("/proc/thread-self").split("/").pop());
  if (Number.isInteger(tid) && tid > 0) require("node:os").setPriority(tid, 19);
} catch {}
`;

/** Shape and limits of a pool. */
export interface WorkerPoolOptions {
  /**
   * CommonJS source each worker evaluates (see the module docstring for its message protocol),
   * after LOW_PRIORITY_PROLOGUE.
   */
  source: string;
  /** Most workers at once (>= 1). */
  size: number;
  /** Most jobs waiting for a worker; `run` rejects WorkerPoolFullError beyond it. */
  maxQueued: number;
  /** An idle worker exits after this many ms. */
  idleMs: number;
  /** Old-generation heap cap of each worker, MiB (worker resourceLimits). */
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
  transfer: TransferListItem[];
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
  detach: () => void;
}

interface Slot {
  worker: Worker;
  job?: Job;
  idleTimer?: NodeJS.Timeout;
  dead: boolean;
}

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
   * (a running worker is terminated, so its CPU is freed at once), WorkerJobError when the worker
   * threw or died. `transfer` (postMessage's transfer list) moves those ArrayBuffers of `input` to
   * the worker instead of copying them: they are detached here once the job is sent.
   */
  run(input: In, options: { signal?: AbortSignal; transfer?: TransferListItem[] } = {}): Promise<Out> {
    throwIfAborted(options.signal);
    const free = this.#idle.length > 0 || this.#slots.size < this.#options.size;
    if (!free && this.#queue.length >= this.#options.maxQueued) {
      return Promise.reject(new WorkerPoolFullError(this.#options.maxQueued));
    }
    return new Promise<Out>((resolve, reject) => {
      const job: Job = {
        input,
        transfer: options.transfer ?? [],
        resolve: resolve as (v: unknown) => void,
        reject,
        detach: () => {},
      };
      job.detach = onAbort(options.signal, () => this.#abort(job));
      this.#queue.push(job);
      this.#pump();
    });
  }

  /** Terminates every worker; queued and running jobs reject AbortError. */
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
      slot.worker.ref();
      try {
        slot.worker.postMessage(job.input, job.transfer);
      } catch (err) {
        // An input the structured clone refuses (a function, say): that job fails, the worker stays.
        slot.job = undefined;
        slot.worker.unref();
        this.#idle.push(slot);
        this.#settle(job, new WorkerJobError(`worker job input not sent: ${(err as Error).message}`));
      }
    }
  }

  #spawn(): Slot {
    const worker = new Worker(LOW_PRIORITY_PROLOGUE + this.#options.source, {
      eval: true,
      resourceLimits: { maxOldGenerationSizeMb: this.#options.maxHeapMb },
    });
    const slot: Slot = { worker, dead: false };
    this.#slots.add(slot);
    worker.on("message", (reply: { ok: boolean; value?: unknown; message?: string }) => {
      const job = slot.job;
      if (!job) return;
      slot.job = undefined;
      worker.unref();
      slot.idleTimer = setTimeout(() => void this.#kill(slot), this.#options.idleMs).unref();
      this.#idle.push(slot);
      if (reply.ok) this.#settle(job, undefined, reply.value);
      else this.#settle(job, new WorkerJobError(reply.message ?? "worker job failed"));
      this.#pump();
    });
    worker.on("error", (err: Error & { code?: string }) => {
      void this.#kill(slot, new WorkerJobError(err.message, err.code));
    });
    worker.on("exit", () => {
      void this.#kill(slot, new WorkerJobError("worker exited during a job"));
    });
    return slot;
  }

  #settle(job: Job, err: Error | undefined, value?: unknown): void {
    job.detach();
    if (err) job.reject(err);
    else job.resolve(value);
  }

  async #kill(slot: Slot, reason?: Error): Promise<void> {
    if (slot.dead) return;
    slot.dead = true;
    clearTimeout(slot.idleTimer);
    this.#slots.delete(slot);
    const at = this.#idle.indexOf(slot);
    if (at !== -1) this.#idle.splice(at, 1);
    const job = slot.job;
    slot.job = undefined;
    if (job) this.#settle(job, reason ?? new WorkerJobError("worker ended"));
    this.#pump();
    await slot.worker.terminate();
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
 * A process-wide pool created on first use, of the shape warden's CPU-heavy helpers share:
 * min(2, cores - 1) workers (at least 1), `maxQueued` waiting jobs, 10 s idle, 512 MiB heap each.
 */
export function lazySharedPool<In, Out>(source: string, maxQueued: number): () => WorkerPool<In, Out> {
  let pool: WorkerPool<In, Out> | undefined;
  return () => {
    pool ??= new WorkerPool<In, Out>({
      source,
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
