/**
 * The egress section's scale phase (issue 40's fifth target): K sessions with network on this
 * host, started `concurrency` at a time, each then making one HTTPS request through its gateway
 * (so every gateway has opened a tunnel and made a leaf certificate), against K sessions without
 * network started the same way. Measured: the wall time to start all K, each container's memory as
 * `docker stats` shows it (cgroup usage minus inactive file pages, from the engine's stats), the
 * gateways' mean and max, the host's total (sandboxes + gateways), the engine processes' memory
 * growth and the host's MemAvailable drop (egress-host-memory.ts), and the controller's RSS growth.
 *
 * K is the sessions asked for, capped by the engine: each session with network takes one network
 * from the engine's address pools (30 on a default engine, shared with everyone using it), so K is
 * at most the free pool slots minus `reserve` left for others, and each gateway takes an address on
 * the egress network, so K is at most its free addresses; the row says when K was capped.
 * Everything is closed afterwards, and whatever carries the phase's tenant label is removed even
 * when the phase fails.
 */
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import type Docker from "dockerode";
import { ROLE_LABEL } from "../../src/egress/index.js";
import { LABEL, type SandboxSpec } from "../../src/sandbox/index.js";
import { createSession, type Session } from "../../src/session/index.js";
import type { BenchRow } from "../harness.js";
import { runOk, sandboxSide } from "./egress-direct.js";
import { hostMemory } from "./egress-host-memory.js";
import { freeAddressPools, networkRoom } from "./egress-pools.js";

const MIB = 1024 * 1024;

/** Runs `fn` over `items`, at most `limit` at once; resolves when all settled, with their results. */
async function pool<T, R>(
  items: T[],
  limit: number,
  fn: (t: T) => Promise<R>,
): Promise<PromiseSettledResult<R>[]> {
  const out: PromiseSettledResult<R>[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T).then(
        (value) => ({ status: "fulfilled", value }) as const,
        (reason: unknown) => ({ status: "rejected", reason }) as const,
      );
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** A container's memory as `docker stats` shows it (bytes): usage less inactive file pages. */
async function memoryOf(docker: Docker, id: string): Promise<number> {
  const s = (await docker
    .getContainer(id)
    .stats({ stream: false, "one-shot": true } as never)) as unknown as {
    memory_stats: { usage?: number; stats?: Record<string, number> };
  };
  const m = s.memory_stats;
  const inactive = m.stats?.total_inactive_file ?? m.stats?.inactive_file ?? 0;
  return (m.usage ?? 0) - inactive;
}

interface Fleet {
  startMs: number;
  /** Each session's createSession time, in the order they started. */
  eachMs: number[];
  sandboxBytes: number[];
  gatewayBytes: number[];
  rssGrowth: number;
  /** The host's MemAvailable drop and the engine processes' PSS growth; undefined where unreadable. */
  availableDrop: number | undefined;
  engineGrowth: number | undefined;
  failed: string[];
}

const less = (a: number | undefined, b: number | undefined) =>
  a === undefined || b === undefined ? undefined : a - b;

/** Starts `count` sessions of `sandbox`, requests once through each when `request`, measures, closes. */
async function fleet(
  docker: Docker,
  tenant: string,
  count: number,
  concurrency: number,
  sandbox: SandboxSpec,
  request?: string[],
): Promise<Fleet> {
  globalThis.gc?.();
  const rss0 = process.memoryUsage().rss;
  const host0 = await hostMemory();
  const sessions: Session[] = [];
  try {
    const t0 = performance.now();
    const eachMs: number[] = [];
    const started = await pool(Array.from({ length: count }), concurrency, async () => {
      const t = performance.now();
      const s = await createSession({ tenant, sandbox });
      eachMs.push(performance.now() - t);
      sessions.push(s);
      return s;
    });
    const startMs = performance.now() - t0;
    const failed = started.flatMap((r) => (r.status === "rejected" ? [String(r.reason)] : []));
    if (request)
      for (const r of await pool(sessions, concurrency, (s) =>
        runOk(sandboxSide(s, 60_000), request, "request"),
      ))
        if (r.status === "rejected") failed.push(String(r.reason));
    globalThis.gc?.();
    const rssGrowth = process.memoryUsage().rss - rss0;
    const host = await hostMemory();
    const sandboxIds = sessions.map((s) => s.sandbox.info.containerId);
    const gateways = await docker.listContainers({
      filters: { label: [`${LABEL.tenant}=${tenant}`, `${ROLE_LABEL}=gateway`] },
    });
    const mem = async (ids: string[]) =>
      (await pool(ids, 8, (id) => memoryOf(docker, id))).flatMap((r) =>
        r.status === "fulfilled" ? [r.value] : [],
      );
    return {
      startMs,
      eachMs,
      sandboxBytes: await mem(sandboxIds),
      gatewayBytes: await mem(gateways.map((g) => g.Id)),
      rssGrowth,
      availableDrop: less(host0.available, host.available),
      engineGrowth: less(host.engine, host0.engine),
      failed,
    };
  } finally {
    await pool(sessions, concurrency, (s) => s.close());
  }
}

/** A MiB row of a figure that may be unreadable (`missing` says why); `note` goes with a value. */
function optional(
  name: string,
  value: number | undefined,
  baseline: number | undefined,
  baselineName: string,
  missing: string,
  note?: string,
): BenchRow {
  if (value === undefined || baseline === undefined)
    return { name, value: Number.NaN, unit: "MiB", note: missing };
  return {
    name,
    value: value / MIB,
    unit: "MiB",
    baseline: baseline / MIB,
    baselineName,
    ...(note ? { note } : {}),
  };
}

/** Removes every container and network labelled with `tenant` (what a failed close left). */
async function sweep(docker: Docker, tenant: string): Promise<void> {
  const filters = { label: [`${LABEL.tenant}=${tenant}`] };
  for (const c of await docker.listContainers({ all: true, filters }))
    await docker
      .getContainer(c.Id)
      .remove({ force: true, v: true })
      .catch(() => {});
  for (const n of await docker.listNetworks({ filters }))
    await docker
      .getNetwork(n.Id)
      .remove()
      .catch(() => {});
}

/** Sizes of the phase. */
export interface ScaleSizes {
  sessions: number;
  concurrency: number;
  reserve: number;
}

/** The phase's rows; `network` is the networked sessions' spec part, `request` one HTTPS GET's argv. */
export async function scaleRows(
  docker: Docker,
  network: NonNullable<SandboxSpec["network"]>,
  request: string[],
  sizes: ScaleSizes,
): Promise<BenchRow[]> {
  const slots = await freeAddressPools(docker);
  const egress = ("egressNetworks" in network && network.egressNetworks?.[0]) || "bridge";
  const room = await networkRoom(docker, egress);
  const k = Math.max(0, Math.min(sizes.sessions, slots.free - sizes.reserve, room));
  const capped =
    k < sizes.sessions
      ? `asked ${sizes.sessions}; the engine's address pools have ${slots.free} of ${slots.total} free, ${sizes.reserve} left for others; the egress network ${egress} has ${room} free addresses (one per gateway)`
      : undefined;
  if (k === 0)
    return [{ name: "sessions with network started", value: 0, unit: "count", note: capped ?? "" }];
  const tenant = `bench-egress-scale-${randomBytes(3).toString("hex")}`;
  try {
    const without = await fleet(docker, tenant, k, sizes.concurrency, {});
    const withNet = await fleet(docker, tenant, k, sizes.concurrency, { network }, request);
    const problems = [...without.failed, ...withNet.failed];
    if (problems.length > 0)
      throw new Error(`${problems.length} sessions failed: ${problems.slice(0, 3).join("; ")}`);
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    const mean = (xs: number[]) => sum(xs) / xs.length;
    const base = `${k} sessions without network`;
    const tail = Math.max(1, Math.min(10, Math.floor(k / 2)));
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
    const totalWith = sum(withNet.sandboxBytes) + sum(withNet.gatewayBytes);
    return [
      { name: "sessions with network started", value: k, unit: "count", ...(capped ? { note: capped } : {}) },
      {
        name: `start ${k} sessions, ${sizes.concurrency} at a time`,
        value: withNet.startMs,
        unit: "ms",
        baseline: without.startMs,
        baselineName: base,
      },
      {
        name: `one session's start with network, median of the last ${tail} of ${k} started`,
        value: median(withNet.eachMs.slice(-tail)),
        unit: "ms",
        baseline: median(withNet.eachMs.slice(0, tail)),
        baselineName: `the first ${tail}`,
      },
      { name: "gateway memory per session, mean", value: mean(withNet.gatewayBytes) / MIB, unit: "MiB" },
      {
        name: "gateway memory per session, max",
        value: Math.max(...withNet.gatewayBytes) / MIB,
        unit: "MiB",
      },
      {
        name: "host memory per session (sandbox + gateway), mean",
        value: totalWith / k / MIB,
        unit: "MiB",
        baseline: mean(without.sandboxBytes) / MIB,
        baselineName: "sandbox of a session without network",
      },
      {
        name: `host memory of ${k} sessions (sandboxes + gateways)`,
        value: totalWith / MIB,
        unit: "MiB",
        baseline: sum(without.sandboxBytes) / MIB,
        baselineName: base,
      },
      optional(
        `engine processes' memory growth (dockerd, containerd, shims; PSS) with ${k} sessions open`,
        withNet.engineGrowth,
        without.engineGrowth,
        base,
        "the engine's processes are not readable here (another user's, without root)",
      ),
      optional(
        `host MemAvailable drop with ${k} sessions open`,
        withNet.availableDrop,
        without.availableDrop,
        base,
        "no /proc/meminfo",
        "everything on the host: also what else ran meanwhile",
      ),
      {
        name: `controller RSS growth with ${k} sessions open`,
        value: withNet.rssGrowth / MIB,
        unit: "MiB",
        baseline: without.rssGrowth / MIB,
        baselineName: base,
      },
    ];
  } finally {
    await sweep(docker, tenant);
  }
}
