/**
 * The process a WorkerPool worker runs in: a child `node` process (the running binary,
 * `process.execPath`) whose every thread runs at nice 19, the lowest CPU priority. A worker thread
 * could lower only its own thread: V8's platform threads, which collect every isolate's garbage
 * (the workers' too), and libuv's are shared with the server's event loop and stay at its priority.
 * In a process of its own, all of a worker's CPU, its garbage collection included, is at nice 19,
 * so on a busy machine the kernel runs the server's event loop first whenever it is ready (issue
 * 11, the noisy-neighbour bench).
 *
 * The child is started with `-e BOOT`, an empty environment (no server secret reaches it), the heap
 * cap `--max-old-space-size`, IPC with "advanced" serialization (the structured clone worker
 * threads used: typed arrays, Maps) and its stderr piped (the tail names why it died). The parent
 * lowers the child's first thread as soon as it has its pid, and BOOT lowers every thread the child
 * has by then (the ones node started before any script ran); every later thread inherits nice 19
 * from the thread that starts it. BOOT then imports the worker module the first message names (a
 * file URL, workerModule below) and answers each later message `input` with `{ ok: true, value }`,
 * `value` being what the module's `runJob(input)` returns or resolves, or `{ ok: false, message }`
 * when it throws, one job at a time. A module run from source (a `.ts` file: under vitest) is
 * loaded through module hooks (registerHooks, Node 22.15+): a resolve hook maps a relative `.js`
 * import to its `.ts` file, as tsc's output names them, and a load hook compiles each `.ts` file
 * with the checkout's typescript (transpileModule: parameter properties and all, which Node's own
 * type stripping refuses); from dist/ it is the compiled `.js`, and no hook is installed. The child exits when its IPC channel closes (the parent exited or let it go).
 *
 * Where the kernel groups processes by session (CONFIG_SCHED_AUTOGROUP, on in Debian's kernels and
 * enabled by default: /proc/sys/kernel/sched_autogroup_enabled; see sched(7)), a nice value ranks
 * threads only within their session's group, and the groups share the CPUs equally: a worker in
 * the server's session took the session's whole share from the engine and the sandboxes (dockerd,
 * each container) while the event loop slept. So the child is started in a session of its own
 * (`detached`: setsid) and BOOT sets that group's nice to WORKER_GROUP_NICE, 10 (/proc/self/autogroup;
 * an unprivileged write may be refused with EAGAIN for 100 ms after any other, so it is retried).
 * Not 19: a group's nice weighs it against the other groups, and at 19 (weight 15 against a nice-0
 * group's 1024) a worker all but stopped while other sessions kept the CPUs busy (issue 36: under
 * stress-ng with 2 threads per core, a job of 0.19 s of CPU took 118 s, and image reads came back
 * omitted). At 10 (weight 110) the group still yields about 9 of every 10 contended time slices to
 * each busy nice-0 group, and it always finishes. A
 * server in a cgroup of its own (a systemd unit) is not grouped by session: there the cgroup's CPU
 * weight ranks it against the containers, and nice ranks the worker within it. In a session of its
 * own a worker is also out of the server's process group: a signal to the group (Ctrl-C in a
 * terminal, `kill -- -<pgid>`) no longer reaches it, and it exits when its IPC channel closes (the
 * server exited or was killed), after the job it is running, if any (bounded by the pools' input
 * limits and heap cap); WorkerPool kills its workers by pid when it stops.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { setPriority } from "node:os";

/** The nice value every thread of a worker process runs at (the lowest CPU priority). */
export const WORKER_NICE = 19;
/** The nice value of a worker's scheduler autogroup, which ranks it against other sessions (see the docstring). */
const WORKER_GROUP_NICE = 10;

/** Bytes of a worker process's stderr kept to explain its death. */
const STDERR_TAIL_BYTES = 4096;

/** The child's script (CommonJS, `node -e`); see the module docstring. */
const BOOT = `
"use strict";
process.title = "warden-worker";
const { setPriority } = require("node:os");
try {
  for (const tid of require("node:fs").readdirSync("/proc/self/task")) setPriority(Number(tid), ${WORKER_NICE});
} catch {
  try { setPriority(0, ${WORKER_NICE}); } catch {}
}
const lowerAutogroup = (tries) => {
  try {
    require("node:fs").writeFileSync("/proc/self/autogroup", "${WORKER_GROUP_NICE}");
  } catch (err) {
    if (err.code === "EAGAIN" && tries > 1) setTimeout(lowerAutogroup, 150, tries - 1).unref();
  }
};
lowerAutogroup(20);
process.on("disconnect", () => process.exit(0));
process.once("message", (href) => {
  if (href.endsWith(".ts")) {
    require("node:module").registerHooks({
      resolve(specifier, context, next) {
        try {
          return next(specifier, context);
        } catch (err) {
          const fromTs = context.parentURL !== undefined && context.parentURL.endsWith(".ts");
          if (err.code !== "ERR_MODULE_NOT_FOUND" || !fromTs || !(specifier.startsWith("./") || specifier.startsWith("../")) || !specifier.endsWith(".js")) throw err;
          return next(specifier.slice(0, -3) + ".ts", context);
        }
      },
      load(url, context, next) {
        if (!url.startsWith("file:") || !url.endsWith(".ts")) return next(url, context);
        const file = require("node:url").fileURLToPath(url);
        const ts = require(require("node:module").createRequire(file).resolve("typescript"));
        const { outputText } = ts.transpileModule(require("node:fs").readFileSync(file, "utf8"), {
          fileName: file,
          compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2023, sourceMap: false },
        });
        return { format: "module", source: outputText, shortCircuit: true };
      },
    });
  }
  const loaded = import(href);
  loaded.catch(() => {}); // each job answers the failure below
  let last = Promise.resolve();
  process.on("message", (input) => {
    last = last.then(async () => {
      let reply;
      try {
        reply = { ok: true, value: await (await loaded).runJob(input) };
      } catch (err) {
        reply = { ok: false, message: String((err && err.message) || err) };
      }
      process.send(reply);
    });
  });
});
`;

/**
 * The file URL of the worker module `name` (e.g. "line-diff-worker") beside the module whose
 * `import.meta.url` is `beside`: `name.js` in dist/, `name.ts` when that module runs from source.
 * A worker module exports `runJob(input)`, returning or resolving the job's value (a structured
 * clone crosses back) or throwing; it imports what it needs like any module.
 */
export function workerModule(beside: string, name: string): URL {
  return new URL(`./${name}${beside.endsWith(".ts") ? ".ts" : ".js"}`, beside);
}

/** A started worker process and the tail of its stderr so far. */
export interface WorkerProcess {
  child: ChildProcess;
  /** The last STDERR_TAIL_BYTES of the child's stderr (a fatal error's report), as text. */
  stderrTail(): string;
}

/**
 * Starts a worker process running the worker module `module` (workerModule; see the module
 * docstring) with an old-generation heap cap of `maxHeapMb` MiB. The child and its channels are
 * unref'd: callers ref them while a job runs. Emits the ChildProcess's usual events ("message",
 * "exit", "error").
 */
export function startWorkerProcess(module: URL, maxHeapMb: number): WorkerProcess {
  const args = [`--max-old-space-size=${maxHeapMb}`, "-e", BOOT];
  const child = spawn(process.execPath, args, {
    env: {},
    stdio: ["ignore", "ignore", "pipe", "ipc"],
    serialization: "advanced",
    detached: true, // a session, and so a scheduler autogroup, of its own (see the module docstring)
  });
  if (child.pid !== undefined) {
    try {
      setPriority(child.pid, WORKER_NICE);
    } catch {
      // Gone already (its "exit" follows) or no such call here: BOOT lowers its threads itself.
    }
  }
  let tail = Buffer.alloc(0);
  child.stderr?.on("data", (chunk: Buffer) => {
    tail = Buffer.concat([tail, chunk]);
    if (tail.length > STDERR_TAIL_BYTES) tail = tail.subarray(tail.length - STDERR_TAIL_BYTES);
  });
  child.send(module.href);
  unrefWorkerProcess(child);
  return { child, stderrTail: () => tail.toString() };
}

/** Lets a worker process keep the parent alive (while a job runs). */
export function refWorkerProcess(child: ChildProcess): void {
  child.ref();
  child.channel?.ref();
}

/** Lets the parent exit while a worker process is idle. */
export function unrefWorkerProcess(child: ChildProcess): void {
  child.unref();
  child.channel?.unref();
  (child.stderr as { unref?: () => void } | null)?.unref?.();
}

/** Clock ticks per second of /proc's CPU times: USER_HZ, 100 on every Linux architecture node runs on. */
const USER_HZ = 100;

/**
 * CPU time a process has used so far, in ms: user plus system time of all its threads, from
 * /proc/<pid>/stat (fields 14 and 15, in USER_HZ ticks; proc(5)). Unlike wall time it does not
 * grow while the process waits for a CPU, so a bound on it holds on a busy machine. Undefined where
 * there is no /proc (not Linux) or the process is gone.
 */
export function processCpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name, which is in parentheses and may hold spaces: field 3 first.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? (ticks * 1000) / USER_HZ : undefined;
  } catch {
    return undefined;
  }
}
