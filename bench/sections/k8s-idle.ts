/**
 * How many idle sessions the node holds (the k8s bench section's density phase): creates sessions
 * through warden's Kubernetes backend, `concurrency` at a time, until the first create fails or
 * `max` are held, and says what stopped it (the failed create's error, which carries the
 * scheduler's or the kubelet's reason, or the cap) beside the node's own bounds for Pods like these
 * (k8s-room.ts: maxPods, CPU and memory requests) read before and after. Then it counts the Pods
 * the API reports Ready and the sessions that still answer `bash -c true` over their channel, and
 * weighs them: the controller's RSS per session (least-squares slope over checkpoints, after
 * gc()), the node's working set per Pod and the Pods' cgroups (the kubelet's summary API), and the
 * containerd shims outside them (their PSS in /proc, only when the node is this machine). Meant for
 * a single-node cluster (on more nodes the scheduler spreads the Pods; the node figures are the
 * first session's node's). Every session is destroyed before it returns, failed or not.
 */
import { readdir, readFile } from "node:fs/promises";
import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import type { Sandbox } from "../../src/sandbox/index.js";
import { createKubernetesSandbox, type KubernetesCluster } from "../../src/sandbox/kubernetes/index.js";
import { Slots } from "../../src/util/index.js";
import { type BenchRow, percentile } from "../harness.js";
import {
  kubeletSummary,
  nodeOf,
  nodeRoomNow,
  podWorkingSets,
  runPodRequests,
  runSelector,
} from "./k8s-cluster.js";
import { type NodeRoom, slope } from "./k8s-room.js";

const MiB = 1024 * 1024;
/** How long to wait for the kubelet's stats to cover every new Pod (ms): its housekeeping runs every 10-15 s. */
const STATS_WAIT_MS = 90_000;
/** Sessions between two checkpoints (controller RSS, load average, elapsed time). */
const CHECKPOINT_EVERY = 25;
/** The local cluster's containerd socket (scripts/ensure-k8s.sh): its shims serve the Pods. */
const SHIM_SOCKET = process.env.WARDEN_BENCH_K8S_SHIM_SOCKET ?? "/run/warden-k8s/containerd.sock";

/** The PSS (bytes) of every containerd shim serving the cluster's containerd on this machine, and how many. */
async function shimPss(): Promise<{ count: number; bytes: number }> {
  let count = 0;
  let bytes = 0;
  for (const pid of await readdir("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const cmd = await readFile(`/proc/${pid}/cmdline`, "utf8");
      if (!cmd.includes("containerd-shim") || !cmd.includes(SHIM_SOCKET)) continue;
      const rollup = await readFile(`/proc/${pid}/smaps_rollup`, "utf8");
      const kib = Number(/^Pss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? Number.NaN);
      if (Number.isFinite(kib)) {
        count++;
        bytes += kib * 1024;
      }
    } catch {
      // the process ended or is not ours to read
    }
  }
  return { count, bytes };
}

/** One memory checkpoint of the controller after gc(): sessions held, RSS and V8's heap plus external memory (bytes). */
interface Checkpoint {
  held: number;
  rss: number;
  heap: number;
}

function checkpoint(held: number): Checkpoint {
  globalThis.gc?.();
  globalThis.gc?.();
  const m = process.memoryUsage();
  return { held, rss: m.rss, heap: m.heapUsed + m.external };
}

/** Runs `fn` on every item, at most `limit` at a time (the end's checks and deletes: 200 at once loaded the node past a load of 400 with gVisor). */
function bounded<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const slots = new Slots(limit);
  return Promise.all(
    items.map(async (item) => {
      const release = await slots.acquire();
      try {
        return await fn(item);
      } finally {
        release();
      }
    }),
  );
}

/** Sessions checked or destroyed at once at the end. */
const END_CONCURRENCY = 8;

function describeRoom(room: NodeRoom): string {
  return `${room.placed} Pods on the node (any namespace); ${room.room} more by ${room.bound} (maxPods ${room.maxPods}, CPU requests ${room.cpu}, memory requests ${room.memory})`;
}

/** Options of densityRows. */
export interface DensityOptions {
  /** The cap: sessions held at most (WARDEN_BENCH_K8S_DENSITY_MAX). */
  max: number;
  /** Creates in flight at once. */
  concurrency: number;
  /** Prints what a row cannot carry (the stop reason, the bounds, checkpoints). */
  log: (line: string) => void;
}

/** fill's options: densityRows's plus a reading of the node's room (taken at the first failure). */
interface FillOptions extends DensityOptions {
  room: () => Promise<NodeRoom>;
}

/** What creating up to the cap gave: the sessions, create times, RSS checkpoints, the first failure. */
interface Filled {
  createMs: number[];
  checkpoints: Checkpoint[];
  failure?: { message: string; afterMs: number; room?: NodeRoom };
  /** Creates that failed: the first, and those already in flight beside it that failed too. */
  failed: number;
}

/** Creates sessions `concurrency` at a time into `into` until `max` are held or one fails. */
async function fill(
  cluster: KubernetesCluster,
  tenant: string,
  options: FillOptions,
  into: Sandbox[],
): Promise<Filled> {
  const filled: Filled = { createMs: [], checkpoints: [checkpoint(into.length)], failed: 0 };
  const t0 = performance.now();
  let started = 0;
  const worker = async () => {
    while (filled.failure === undefined && started < options.max) {
      started++;
      const t = performance.now();
      try {
        into.push(await createKubernetesSandbox({ tenant, ttlMs: 3_600_000 }, cluster));
      } catch (err) {
        filled.failed++;
        if (filled.failure) continue;
        const failure: Filled["failure"] = {
          message: (err as Error).message,
          afterMs: performance.now() - t,
        };
        filled.failure = failure;
        // The node as the failed create left it (other tenants' Pods come and go on a shared cluster).
        const room = await options.room().catch(() => undefined);
        if (room) failure.room = room; // a failed reading leaves it out
        continue;
      }
      filled.createMs.push(performance.now() - t);
      if (into.length % CHECKPOINT_EVERY !== 0) continue;
      const point = checkpoint(into.length);
      filled.checkpoints.push(point);
      options.log(
        `idle: ${point.held} held after ${((performance.now() - t0) / 1000).toFixed(0)} s, load ${loadavg()[0]?.toFixed(1)}, controller RSS ${(point.rss / MiB).toFixed(0)} MiB, heap+external ${(point.heap / MiB).toFixed(0)} MiB`,
      );
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency) }, worker));
  if (into.length % CHECKPOINT_EVERY !== 0) filled.checkpoints.push(checkpoint(into.length));
  return filled;
}

/** Polls the kubelet summary until it has every Pod of `names` (or STATS_WAIT_MS passed); returns the last one. */
async function coveredSummary(cluster: KubernetesCluster, node: string, names: Set<string>) {
  const deadline = Date.now() + STATS_WAIT_MS;
  for (;;) {
    const summary = await kubeletSummary(cluster, node);
    const sets = podWorkingSets(summary, cluster.namespace, names);
    if (sets.length >= names.size || Date.now() > deadline) return { summary, sets };
    await new Promise((r) => setTimeout(r, 2000));
  }
}

/** The density rows (see the file comment). */
export async function densityRows(
  cluster: KubernetesCluster,
  tenant: string,
  options: DensityOptions,
): Promise<BenchRow[]> {
  const sandboxes: Sandbox[] = [];
  try {
    const shims0 = await shimPss();
    const t0 = performance.now();
    // The first one alone: its node and its requests give the node's bounds for Pods like it.
    const first = await createKubernetesSandbox({ tenant, ttlMs: 3_600_000 }, cluster);
    sandboxes.push(first);
    const node = await nodeOf(cluster, first.info.containerId);
    const each = await runPodRequests(cluster, first.info.containerId);
    const before = await nodeRoomNow(cluster, node, each);
    const nodeSet0 = (await kubeletSummary(cluster, node)).node?.memory?.workingSetBytes;
    options.log(
      `idle: node ${node}; each session Pod requests ${each.cpuMilli}m CPU and ${(each.memoryBytes / MiB).toFixed(0)} MiB; after the first: ${describeRoom(before)}; cap ${options.max}`,
    );
    const room = () => nodeRoomNow(cluster, node, each);
    const filled = await fill(cluster, tenant, { ...options, max: options.max - 1, room }, sandboxes);
    const wallMs = performance.now() - t0;
    const held = sandboxes.length;
    const stop = filled.failure
      ? `the first failed create (after ${(filled.failure.afterMs / 1000).toFixed(1)} s): ${filled.failure.message}`
      : `the cap (WARDEN_BENCH_K8S_DENSITY_MAX=${options.max})`;
    options.log(`idle: held ${held} in ${(wallMs / 1000).toFixed(0)} s; stopped by ${stop}`);
    if (filled.failure?.room)
      options.log(`idle: the node at the first failure: ${describeRoom(filled.failure.room)}`);
    options.log(`idle: the node's room at the end: ${describeRoom(await nodeRoomNow(cluster, node, each))}`);
    const shims1 = await shimPss();
    const names = new Set(sandboxes.map((s) => s.info.containerId));
    const pods = await cluster.core.listNamespacedPod({
      namespace: cluster.namespace,
      labelSelector: runSelector(tenant),
    });
    const ready = pods.items.filter(
      (p) =>
        names.has(p.metadata?.name ?? "") &&
        p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
    ).length;
    const answers = await bounded(sandboxes, END_CONCURRENCY, (s) =>
      s.exec({ argv: ["bash", "-c", "true"] }).then(
        (r) => r.exitCode === 0,
        () => false,
      ),
    );
    const { summary, sets } = await coveredSummary(cluster, node, names);
    const nodeSet1 = summary.node?.memory?.workingSetBytes;
    const rows: BenchRow[] = [
      { name: "idle sessions held", unit: "count", value: held, baseline: options.max, baselineName: "cap" },
      {
        name: `node's room by its bounds after the first session (${before.bound})`,
        unit: "count",
        value: before.room + 1,
      },
      {
        name: "failed creates (the first stops the filling; others were in flight)",
        unit: "count",
        value: filled.failed,
      },
      { name: "idle session Pods Ready", unit: "count", value: ready, baseline: held, baselineName: "held" },
      {
        name: "idle sessions answering `bash -c true` at the end",
        unit: "count",
        value: answers.filter(Boolean).length,
        baseline: held,
        baselineName: "held",
      },
      {
        name: `idle create p50, ${options.concurrency} at a time`,
        unit: "ms",
        value: percentile(filled.createMs, 50),
      },
      { name: "idle creates, wall time per session held", unit: "ms", value: wallMs / held },
    ];
    if (filled.failure)
      rows.push({ name: "the failed create's time to its error", unit: "ms", value: filled.failure.afterMs });
    if (held > 1 && nodeSet0 !== undefined && nodeSet1 !== undefined)
      rows.push({
        name: `node working set growth per session after the first (kubelet, ${held - 1})`,
        unit: "MiB",
        value: (nodeSet1 - nodeSet0) / (held - 1) / MiB,
      });
    if (sets.length > 0)
      rows.push({
        name: `Pod cgroup working set, mean of ${sets.length} (kubelet)`,
        unit: "MiB",
        value: sets.reduce((a, b) => a + b, 0) / sets.length / MiB,
      });
    if (shims1.count > shims0.count)
      rows.push({
        name: `containerd shim PSS per Pod (${shims1.count - shims0.count} new shims)`,
        unit: "MiB",
        value: (shims1.bytes - shims0.bytes) / (shims1.count - shims0.count) / MiB,
      });
    const points = filled.checkpoints;
    for (const [what, key] of [
      ["RSS", "rss"],
      ["V8 heap + external", "heap"],
    ] as const) {
      const perSession = slope(points.map((p) => ({ x: p.held, y: p[key] })));
      if (Number.isFinite(perSession))
        rows.push({
          name: `controller ${what} per session (slope over ${points.length} checkpoints)`,
          unit: "KiB",
          value: perSession / 1024,
        });
    }
    return rows;
  } finally {
    await bounded(sandboxes, END_CONCURRENCY, (s) => s.destroy().catch(() => undefined));
  }
}
