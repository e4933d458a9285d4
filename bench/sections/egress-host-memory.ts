/**
 * The host's memory outside the containers' cgroups, for the egress section's scale phase: the
 * engine's own processes (dockerd, containerd and one containerd shim per container), whose memory
 * `docker stats` does not show, and the kernel's MemAvailable, which holds everything (those
 * processes, the bridges and veths of every network, and whatever else runs on the host meanwhile).
 */
import { readdir, readFile } from "node:fs/promises";

/** Process names (/proc/PID/comm, at most 15 characters) of the engine's processes. */
const ENGINE_PROCESSES = new Set(["dockerd", "containerd", "containerd-shim", "containerd-shim-runc-v2"]);

/** The `Pss:` line of an smaps_rollup text, in bytes; undefined when it has none. */
export function pssBytes(smapsRollup: string): number | undefined {
  const m = /^Pss:\s+(\d+) kB$/m.exec(smapsRollup);
  return m ? Number(m[1]) * 1024 : undefined;
}

/** The `MemAvailable:` line of a /proc/meminfo text, in bytes; undefined when it has none. */
export function memAvailableBytes(meminfo: string): number | undefined {
  const m = /^MemAvailable:\s+(\d+) kB$/m.exec(meminfo);
  return m ? Number(m[1]) * 1024 : undefined;
}

/** What the host holds now (bytes). */
export interface HostMemory {
  /** The kernel's MemAvailable; undefined without /proc/meminfo. */
  available: number | undefined;
  /**
   * The engine's processes' proportional set size summed (shared pages split between sharers);
   * undefined when none could be read (another user's processes, without root).
   */
  engine: number | undefined;
  /** How many engine processes were summed. */
  engineProcesses: number;
}

/** Reads MemAvailable and the engine's processes' PSS from /proc. */
export async function hostMemory(): Promise<HostMemory> {
  const available = memAvailableBytes(await readFile("/proc/meminfo", "utf8").catch(() => ""));
  let engine: number | undefined;
  let engineProcesses = 0;
  for (const pid of (await readdir("/proc").catch(() => [] as string[])).filter((p) => /^\d+$/.test(p))) {
    const comm = (await readFile(`/proc/${pid}/comm`, "utf8").catch(() => "")).trim();
    if (!ENGINE_PROCESSES.has(comm)) continue;
    const pss = pssBytes(await readFile(`/proc/${pid}/smaps_rollup`, "utf8").catch(() => ""));
    if (pss === undefined) continue;
    engine = (engine ?? 0) + pss;
    engineProcesses++;
  }
  return { available, engine, engineProcesses };
}
