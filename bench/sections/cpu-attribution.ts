/**
 * Who used the CPU over a bench phase (Linux only; elsewhere every reading is empty): the server
 * process's threads grouped by nice value (the main thread apart), its worker pools' processes,
 * other host processes by pid (tenant A's
 * client, dockerd, Docker's containerd, the containerd shims of the tenants' containers, counting
 * the children they reaped, e.g. runc), each tenant's containers as a whole (cgroup v1 or v2
 * cpu usage, which counts processes that already exited) and, inside them, processes by command
 * name (sampled every SAMPLE_MS from the cgroup's process list: a process that lived shorter than
 * that is only in its container's total, shown as "<tenant> (exited, unsampled)"). The machine's
 * busy time (/proc/stat) minus all of these is "rest of the machine" (other work sharing it).
 *
 * The figures are CPU ms per wall second of the phase, so they stay comparable while other work
 * loads the machine (unlike latencies). Pure parts: `cpuDeltas`, `topConsumers`.
 */
import { readdirSync, readFileSync } from "node:fs";
import { getDocker } from "../../src/sandbox/docker/engine.js";

/** How often the processes inside the containers are sampled, ms. */
const SAMPLE_MS = 100;

/** The name of the machine's busy time in a reading. */
const MACHINE = "machine busy (all)";

/** The scheduling policy number of SCHED_IDLE (sched(7); field 41 of /proc/<pid>/stat). */
const SCHED_IDLE = 5;

/** Clock ticks per second of /proc/<pid>/stat's times (USER_HZ; 100 on every Linux build in use). */
const TICKS_PER_S = 100;

/** A reading: consumer name → CPU ms used since some fixed origin (only differences mean anything). */
export type CpuReading = Map<string, number>;

/** One consumer's share of a phase: CPU ms per unit (per wall second: 1000 = one whole core; or per call). */
export interface CpuShare {
  name: string;
  ms: number;
}

/**
 * CPU ms each consumer used between `before` and `after` (consumers only in `after` count from 0:
 * they started during the phase). A negative difference (a pid reused) counts as 0.
 */
export function cpuDeltas(before: CpuReading, after: CpuReading): CpuReading {
  const deltas: CpuReading = new Map();
  for (const [name, ms] of after) deltas.set(name, Math.max(0, ms - (before.get(name) ?? 0)));
  return deltas;
}

/**
 * The `count` largest consumers of `deltas` in CPU ms per unit (`units` of them in the phase: its
 * wall seconds, or the calls made), largest first (ties by name); those under 1 ms per unit are left out.
 */
export function topConsumers(deltas: CpuReading, units: number, count: number): CpuShare[] {
  return [...deltas]
    .map(([name, ms]) => ({ name, ms: units > 0 ? ms / units : 0 }))
    .filter((s) => s.ms >= 1)
    .sort((a, b) => b.ms - a.ms || (a.name < b.name ? -1 : 1))
    .slice(0, count);
}

/**
 * utime+stime (and cutime+cstime with `children`) of /proc/<path>/stat in ms, the comm, the nice
 * value and the scheduling policy; null if gone.
 */
function procTimes(
  path: string,
  children: boolean,
): { comm: string; ms: number; nice: number; policy: number } | null {
  try {
    const stat = readFileSync(`/proc/${path}/stat`, "utf8");
    const close = stat.lastIndexOf(")");
    const comm = stat.slice(stat.indexOf("(") + 1, close);
    // Fields after the comm start at field 3 (state); utime is field 14, stime 15, cutime 16, cstime
    // 17, nice 19, policy 41.
    const f = stat.slice(close + 2).split(" ");
    const own = Number(f[11]) + Number(f[12]);
    const reaped = children ? Number(f[13]) + Number(f[14]) : 0;
    return { comm, ms: ((own + reaped) * 1000) / TICKS_PER_S, nice: Number(f[16]), policy: Number(f[38]) };
  } catch {
    return null;
  }
}

/** The thread ids of process `pid` ([] once it is gone). */
function threadsOf(pid: number): string[] {
  try {
    return readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

/** The busy CPU ms of the whole machine (/proc/stat's first line, all but idle and iowait). */
function machineBusyMs(): number | null {
  const line = readText("/proc/stat")?.split("\n")[0];
  if (!line?.startsWith("cpu ")) return null;
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  return (
    (((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) * 1000) /
    TICKS_PER_S
  );
}

/** A container's cgroup: its CPU usage (ms) and its pids, under cgroup v1 (cgroupfs) or v2. */
function containerCgroup(id: string): { ms: number; pids: string[] } | null {
  const v1 = `/sys/fs/cgroup/cpuacct/docker/${id}`;
  const usage = readText(`${v1}/cpuacct.usage`);
  if (usage !== null)
    return {
      ms: Number(usage) / 1e6,
      pids: (readText(`${v1}/cgroup.procs`) ?? "").split("\n").filter(Boolean),
    };
  for (const v2 of [`/sys/fs/cgroup/system.slice/docker-${id}.scope`, `/sys/fs/cgroup/docker/${id}`]) {
    const stat = readText(`${v2}/cpu.stat`);
    const usec = stat?.match(/^usage_usec (\d+)/m)?.[1];
    if (usec !== undefined)
      return {
        ms: Number(usec) / 1000,
        pids: (readText(`${v2}/cgroup.procs`) ?? "").split("\n").filter(Boolean),
      };
  }
  return null;
}

/** Host pids whose comm is `comm` and whose command line contains `arg` (every one when arg is ""). */
function pidsOf(comm: string, arg: string): string[] {
  const pids: string[] = [];
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    if (readText(`/proc/${pid}/comm`)?.trim() !== comm) continue;
    if (arg === "" || (readText(`/proc/${pid}/cmdline`) ?? "").split("\0").includes(arg)) pids.push(pid);
  }
  return pids;
}

/**
 * CPU ms of the worker pools' processes (util/worker-process.ts: the children of process
 * `serverPid` named "warden-worker"), by how their threads are scheduled ("SCHED_IDLE", or
 * "nice <n>" for normal threads); those that exited (reaped by the server process, its
 * cutime+cstime) are "exited".
 */
function workerProcessMs(serverPid: number): Map<string, number> {
  const byClass = new Map<string, number>();
  const add = (key: string, ms: number) => byClass.set(key, (byClass.get(key) ?? 0) + ms);
  const self = readText(`/proc/${serverPid}/stat`);
  if (self === null) return byClass;
  const f = self.slice(self.lastIndexOf(")") + 2).split(" ");
  add("exited", ((Number(f[13]) + Number(f[14])) * 1000) / TICKS_PER_S);
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    const stat = readText(`/proc/${pid}/stat`);
    if (!stat?.includes("(warden-worker)")) continue;
    if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) !== serverPid) continue;
    for (const tid of threadsOf(Number(pid))) {
      const t = procTimes(`${pid}/task/${tid}`, false);
      if (t) add(t.policy === SCHED_IDLE ? "SCHED_IDLE" : `nice ${t.nice}`, t.ms);
    }
  }
  return byClass;
}

/** What to attribute: tenant name → label value of its containers, and other processes by name. */
export interface AttributionTargets {
  /** Display name → io.warden.tenant label value. */
  tenants: Record<string, string>;
  /** Display name → pid of another host process (e.g. the noisy tenant's client). */
  processes: Record<string, number>;
  /** The server's process, whose threads and worker processes are named "server: …" (default: this one). */
  serverPid?: number;
}

/**
 * Starts attributing: a reading now, processes inside the containers sampled every SAMPLE_MS until
 * `stop`, which returns the `count` largest consumers' CPU ms per second of the phase, or per call
 * when given the `calls` made in it, largest first.
 */
export async function startCpuAttribution(targets: AttributionTargets): Promise<{
  stop(count?: number, calls?: number): CpuShare[];
}> {
  const containers: Array<{ tenant: string; id: string }> = [];
  for (const [tenant, label] of Object.entries(targets.tenants))
    for (const c of await getDocker().listContainers({ filters: { label: [`io.warden.tenant=${label}`] } }))
      containers.push({ tenant, id: c.Id });
  // Processes inside the containers: pid → its name, CPU ms when first and last seen, and whether
  // it was there before the phase (else it started during it and counts from 0).
  const inside = new Map<string, { name: string; first: number; last: number; before: boolean }>();
  let started = false;
  const sampleInside = () => {
    for (const { tenant, id } of containers)
      for (const pid of containerCgroup(id)?.pids ?? []) {
        const t = procTimes(pid, false);
        if (!t) continue;
        const seen = inside.get(pid);
        if (seen) seen.last = t.ms;
        else inside.set(pid, { name: `${tenant}: ${t.comm}`, first: t.ms, last: t.ms, before: !started });
      }
  };
  const docker = [
    ...pidsOf("dockerd", "").map((pid) => ({ name: "dockerd", pid })),
    ...pidsOf("containerd", "/var/run/docker/containerd/containerd.toml").map((pid) => ({
      name: "containerd (Docker's)",
      pid,
    })),
    ...containers.flatMap(({ tenant, id }) =>
      pidsOf("containerd-shim", id).map((pid) => ({ name: `containerd-shim of ${tenant}`, pid })),
    ),
  ];
  const serverPid = targets.serverPid ?? process.pid;
  const read = (): CpuReading => {
    const r: CpuReading = new Map();
    const add = (name: string, ms: number) => r.set(name, (r.get(name) ?? 0) + ms);
    for (const tid of threadsOf(serverPid)) {
      const t = procTimes(`${serverPid}/task/${tid}`, false);
      if (t)
        add(
          Number(tid) === serverPid ? "server: main thread" : `server: ${t.comm} threads at nice ${t.nice}`,
          t.ms,
        );
    }
    for (const [scheduling, ms] of workerProcessMs(serverPid))
      add(`server: worker processes (worker pools), threads ${scheduling}`, ms);
    for (const [name, pid] of Object.entries(targets.processes))
      add(name, procTimes(String(pid), true)?.ms ?? 0);
    for (const { name, pid } of docker) add(name, procTimes(pid, true)?.ms ?? 0);
    for (const { tenant, id } of containers) add(`${tenant} containers (all)`, containerCgroup(id)?.ms ?? 0);
    const busy = machineBusyMs();
    if (busy !== null) r.set(MACHINE, busy);
    return r;
  };
  sampleInside();
  started = true;
  const before = read();
  const t0 = performance.now();
  const timer = setInterval(sampleInside, SAMPLE_MS);
  return {
    stop(count = 12, calls?: number) {
      clearInterval(timer);
      sampleInside();
      const deltas = cpuDeltas(before, read());
      const wallMs = performance.now() - t0;
      // Disjoint consumers (the rest overlap them): their sum is what the machine's busy time less
      // "rest of the machine" holds.
      let attributed = 0;
      for (const [name, ms] of deltas) if (name !== MACHINE) attributed += ms;
      // Inside the containers, by command name; what no sample saw is the container's total less these.
      const byName = new Map<string, number>();
      for (const p of inside.values())
        byName.set(p.name, (byName.get(p.name) ?? 0) + (p.before ? p.last - p.first : p.last));
      for (const tenant of Object.keys(targets.tenants)) {
        let sampled = 0;
        for (const [name, ms] of byName) if (name.startsWith(`${tenant}: `)) sampled += ms;
        const total = deltas.get(`${tenant} containers (all)`) ?? 0;
        byName.set(`${tenant}: (exited, unsampled)`, Math.max(0, total - sampled));
      }
      for (const [name, ms] of byName) deltas.set(`  ${name}`, ms);
      const busy = deltas.get(MACHINE);
      if (busy !== undefined) deltas.set("rest of the machine", Math.max(0, busy - attributed));
      return topConsumers(deltas, calls ?? wallMs / 1000, count);
    },
  };
}
