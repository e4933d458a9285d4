/**
 * Tenant A of the noisy-neighbour section, run as a child process (node:child_process `fork`): a
 * real noisy tenant is another process, so building its 1 MiB JSON bodies, reading its answers and
 * its fetch machinery must not run on the event loop of the server being measured (in one process
 * they took about 2 s of the server's 12 s of main-thread CPU in a 20 s run).
 *
 * Protocol over the IPC channel: the parent sends `init` (server URL, A's key and session, loops,
 * body limit), then `start` with the kinds of load to send in `loops` parallel loops, then `stop`;
 * the child answers `ready`, `started`, and `stopped` with every call's duration (ms) and the set of
 * statuses seen per kind since `init`. `burst` (one kind, a count) makes that many calls one after
 * another, outside those timings, and answers `burst-done` with their statuses. The loads are the worst inputs the limits allow:
 * `edit` rewrites all LINES lines of e<n>.txt (old → new → old), `changes` is GET /changes of the
 * rewritten big.txt, `long` is the longest bash command the JSON body limit allows, `flood` prints
 * 64 MiB.
 *
 * The process runs at the lowest CPU priority (every thread at nice 19, then SCHED_IDLE where
 * util-linux's `chrt` is, and its session's autogroup at nice 19 where the kernel has autogroups:
 * see lowerOwnPriority; `ready` says which it got) unless
 * WARDEN_BENCH_NOISY_CLIENT_NICE is 0 (normal priority) or 19 (nice 19 only, for comparison): a real
 * tenant's client runs on its own machine, while here it shares the bench machine's cores with the
 * server, the sandboxes and B. At the lowest priority it still gets every idle cycle, so it keeps
 * sending as fast as the server answers (the section prints how many calls it completed), but its
 * own JSON building and parsing no longer count against the server being measured. SCHED_IDLE and
 * not only nice 19: a thread at nice 19 keeps its core for the rest of its time slice when a normal
 * one wakes, which B's calls waited for; a SCHED_IDLE thread is preempted at once (sched(7)). The
 * server's own worker processes stay at nice 19 (util/worker-process.ts): under SCHED_IDLE, a
 * machine kept busy by sandboxes would starve every tenant's jobs about five times harder.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, writeFileSync } from "node:fs";
import { setPriority } from "node:os";
import { pathToFileURL } from "node:url";

/** Lines of the files A edits and rewrites. */
export const LINES = 12_000;

/** The LINES-line text A's files hold, each line naming `word`. */
export const linesOf = (word: string) =>
  Array.from({ length: LINES }, (_, i) => `${word} line ${i} of the file\n`).join("");

/** The kinds of load tenant A can send. */
export const LOAD_KINDS = ["edit", "changes", "long", "flood"] as const;
export type LoadKind = (typeof LOAD_KINDS)[number];

/** Parent → child messages. */
export type ToTenant =
  | { type: "init"; url: string; key: string; session: string; loops: number; bodyLimit: number }
  | { type: "start"; kinds: LoadKind[] }
  | { type: "stop" }
  | { type: "burst"; kind: LoadKind; count: number };

/** Child → parent messages. */
export type FromTenant =
  | { type: "ready"; priority: string }
  | { type: "started" }
  | { type: "burst-done"; statuses: string[] }
  | {
      type: "stopped";
      timings: Record<LoadKind, number[]>;
      statuses: Record<LoadKind, string[]>;
      longCommandBytes: number;
    };

type Init = Extract<ToTenant, { type: "init" }>;

function tenant(init: Init) {
  const api = (path: string, body?: string) =>
    fetch(`${init.url}${path}`, {
      ...(body === undefined ? {} : { method: "POST", body }),
      headers: { authorization: `Bearer ${init.key}`, "content-type": "application/json" },
    });
  const call = async (toolCalls: unknown[]) => {
    const res = await api(`/v1/sessions/${init.session}/tool-calls`, JSON.stringify({ toolCalls }));
    const body = (await res.json()) as { results?: { isError: boolean; content: { text?: string }[] }[] };
    const first = body.results?.[0];
    return {
      ok: res.status === 200 && first?.isError === false,
      status: first?.isError
        ? `${res.status} isError: ${first.content[0]?.text?.slice(0, 160)}`
        : `${res.status}`,
    };
  };
  const oldText = linesOf("old");
  const newText = linesOf("new");
  // The longest command the JSON body allows: `true a a a …` up to the limit less the envelope.
  const envelope = JSON.stringify({
    toolCalls: [{ id: "l", name: "bash", arguments: { command: "" } }],
  }).length;
  const longCommand = `true${" a".repeat(Math.floor((init.bodyLimit - envelope - 4) / 2))}`;
  // Each loop's edit file alternates old -> new -> old, so every edit is a full rewrite.
  const holdsOld = Array.from({ length: init.loops }, () => true);
  const ops: Record<LoadKind, (n: number) => Promise<string>> = {
    edit: async (n) => {
      const forward = holdsOld[n] === true;
      const edits = [forward ? { oldText, newText } : { oldText: newText, newText: oldText }];
      const r = await call([{ id: "e", name: "edit", arguments: { path: `e${n}.txt`, edits } }]);
      if (r.ok) holdsOld[n] = !forward;
      return r.status;
    },
    changes: async () => {
      const res = await api(`/v1/sessions/${init.session}/changes`);
      await res.arrayBuffer();
      return String(res.status);
    },
    long: async () => (await call([{ id: "l", name: "bash", arguments: { command: longCommand } }])).status,
    flood: async () =>
      (
        await call([
          { id: "f", name: "bash", arguments: { command: "head -c 67108864 /dev/zero | tr '\\0' x" } },
        ])
      ).status,
  };
  const timings = Object.fromEntries(LOAD_KINDS.map((k) => [k, [] as number[]])) as Record<
    LoadKind,
    number[]
  >;
  const statuses = Object.fromEntries(LOAD_KINDS.map((k) => [k, new Set<string>()])) as Record<
    LoadKind,
    Set<string>
  >;
  const timed = async (kind: LoadKind, n: number) => {
    const t0 = performance.now();
    const status = await ops[kind](n).catch((err: unknown) => `threw ${String(err).slice(0, 80)}`);
    timings[kind].push(performance.now() - t0);
    statuses[kind].add(status);
  };
  let loading = false;
  let loops: Promise<void>[] = [];
  return {
    /** `count` calls of `kind` one after another (loop 0), outside the timings: what one call costs. */
    async burst(kind: LoadKind, count: number): Promise<FromTenant> {
      const seen = new Set<string>();
      for (let i = 0; i < count; i++)
        seen.add(await ops[kind](0).catch((err: unknown) => `threw ${String(err).slice(0, 80)}`));
      return { type: "burst-done", statuses: [...seen] };
    },
    start(kinds: LoadKind[]) {
      loading = true;
      loops = Array.from({ length: init.loops }, async (_, n) => {
        while (loading) for (const kind of kinds) await timed(kind, n);
      });
    },
    async stop(): Promise<FromTenant> {
      loading = false;
      await Promise.all(loops);
      return {
        type: "stopped",
        timings,
        statuses: Object.fromEntries(LOAD_KINDS.map((k) => [k, [...statuses[k]]])) as Record<
          LoadKind,
          string[]
        >,
        longCommandBytes: Buffer.byteLength(longCommand),
      };
    },
  };
}

/**
 * Sets every thread of this process to nice 19 (Linux: setpriority(2) on a thread id changes that
 * thread; threads made later inherit their creator's value) and its session's autogroup too (see
 * lowerOwnAutogroup), then, with `idle`, to SCHED_IDLE with `chrt`. Returns what it got, e.g.
 * "nice 19, SCHED_IDLE, autogroup nice 19", "nice 19" or "normal priority".
 */
function lowerOwnPriority(idle: boolean): string {
  try {
    for (const tid of readdirSync("/proc/self/task")) setPriority(Number(tid), 19);
  } catch {
    return "normal priority";
  }
  const got = ["nice 19"];
  if (idle) {
    try {
      execFileSync("chrt", ["--idle", "--all-tasks", "--pid", "0", String(process.pid)], { stdio: "ignore" });
      got.push("SCHED_IDLE");
    } catch {
      // no chrt: nice 19 only
    }
  }
  if (lowerOwnAutogroup()) got.push("autogroup nice 19");
  return got.join(", ");
}

/**
 * Sets the nice of this process's session group to 19 where the kernel groups sessions for the CPU
 * (autogroup, sched(7)): there a thread's nice and SCHED_IDLE rank it only within its group, and the
 * group takes its full share from the others. An unprivileged write is refused with EAGAIN for 100
 * ms after any other, so it is retried. True when set.
 */
function lowerOwnAutogroup(): boolean {
  for (let tries = 0; tries < 20; tries++) {
    try {
      writeFileSync("/proc/self/autogroup", "19");
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EAGAIN") return false;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 150);
    }
  }
  return false;
}

/** The child's main: answers the parent's messages until it disconnects. */
function main(): void {
  const nice = process.env.WARDEN_BENCH_NOISY_CLIENT_NICE;
  const priority = nice === "0" ? "normal priority" : lowerOwnPriority(nice !== "19");
  let t: ReturnType<typeof tenant> | undefined;
  const send = (message: FromTenant) => process.send?.(message);
  process.on("message", (message: ToTenant) => {
    if (message.type === "init") {
      t = tenant(message);
      send({ type: "ready", priority });
    } else if (message.type === "start") {
      t?.start(message.kinds);
      send({ type: "started" });
    } else if (message.type === "stop") {
      void t?.stop().then(send);
    } else if (message.type === "burst") {
      void t?.burst(message.kind, message.count).then(send);
    }
  });
  process.on("disconnect", () => process.exit(0));
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) main();
