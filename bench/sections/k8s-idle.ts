/**
 * How many idle sessions the node holds (k8s bench section): creates up to `asked` sessions,
 * `concurrency` at a time, stopping at the first failure (its reason is printed), then counts the
 * Pods the API reports Ready and the sessions whose helper still answers a command, and reads the
 * memory they cost: the Pods' cgroups (the kubelet's summary API), the containerd shims outside
 * them (their PSS in /proc, only when the node is this machine), and the controller's RSS growth
 * per session (after gc()). Every session is destroyed before it returns, failed or not.
 */
import { readdir, readFile } from "node:fs/promises";
import { performance } from "node:perf_hooks";
import { createKubernetesSandbox, type KubernetesCluster, type Sandbox } from "../../src/sandbox/index.js";
import { type BenchRow, percentile } from "../harness.js";
import { kubeletSummary, podHeadroom, podWorkingSets, runSelector } from "./k8s-cluster.js";

const MiB = 1024 * 1024;
/** How long to wait for the kubelet's stats to cover every new Pod (ms): its housekeeping runs every 10-15 s. */
const STATS_WAIT_MS = 60_000;
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

function rss(): number {
  globalThis.gc?.();
  globalThis.gc?.();
  return process.memoryUsage().rss;
}

/** Creates up to `asked` sessions, `concurrency` at a time, until the first failure. */
async function createUpTo(
  cluster: KubernetesCluster,
  tenant: string,
  asked: number,
  concurrency: number,
  into: Sandbox[],
): Promise<{ createMs: number[]; failure?: string }> {
  const createMs: number[] = [];
  let failure: string | undefined;
  let next = 0;
  const worker = async () => {
    while (failure === undefined && next < asked) {
      next++;
      const t0 = performance.now();
      try {
        into.push(await createKubernetesSandbox({ tenant, ttlMs: 3_600_000 }, cluster));
        createMs.push(performance.now() - t0);
      } catch (err) {
        failure ??= (err as Error).message;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));
  return failure === undefined ? { createMs } : { createMs, failure };
}

/** Polls the kubelet summary until it has every Pod of `names` (or STATS_WAIT_MS passed). */
async function podMemory(cluster: KubernetesCluster, node: string, names: Set<string>): Promise<number[]> {
  const deadline = Date.now() + STATS_WAIT_MS;
  let sets: number[] = [];
  for (;;) {
    sets = podWorkingSets(await kubeletSummary(cluster, node), cluster.namespace, names);
    if (sets.length >= names.size || Date.now() > deadline) return sets;
    await new Promise((r) => setTimeout(r, 2000));
  }
}

/** The idle-capacity rows (see the file comment). `log` prints what a row cannot carry (the failure). */
export async function idleRows(
  cluster: KubernetesCluster,
  tenant: string,
  options: { asked: number; concurrency: number; node: string; log: (line: string) => void },
): Promise<BenchRow[]> {
  const headroom = await podHeadroom(cluster, options.node);
  const asked = Math.min(options.asked, headroom);
  if (asked < options.asked)
    options.log(`idle: asked ${options.asked}, the node's maxPods leaves room for ${headroom}`);
  const sandboxes: Sandbox[] = [];
  try {
    const rss0 = rss();
    const shims0 = await shimPss();
    const t0 = performance.now();
    const { createMs, failure } = await createUpTo(cluster, tenant, asked, options.concurrency, sandboxes);
    const wallMs = performance.now() - t0;
    if (failure) options.log(`idle: creation stopped at ${sandboxes.length} sessions: ${failure}`);
    const rss1 = rss();
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
    const answers = await Promise.all(
      sandboxes.map((s) =>
        s.exec({ argv: ["true"] }).then(
          (r) => r.exitCode === 0,
          () => false,
        ),
      ),
    );
    const sets = names.size > 0 ? await podMemory(cluster, options.node, names) : [];
    const created = sandboxes.length;
    const rows: BenchRow[] = [
      {
        name: "idle sessions created",
        unit: "count",
        value: created,
        baseline: asked,
        baselineName: "asked",
      },
      {
        name: "idle session Pods Ready",
        unit: "count",
        value: ready,
        baseline: created,
        baselineName: "created",
      },
      {
        name: "idle sessions answering `true`",
        unit: "count",
        value: answers.filter(Boolean).length,
        baseline: created,
        baselineName: "created",
      },
      {
        name: `idle create p50, ${options.concurrency} at a time`,
        unit: "ms",
        value: percentile(createMs, 50),
      },
      { name: "idle creates, wall time", unit: "ms", value: wallMs },
    ];
    if (sets.length > 0) {
      rows.push({
        name: `Pod cgroup working set, mean of ${sets.length} (kubelet)`,
        unit: "MiB",
        value: sets.reduce((a, b) => a + b, 0) / sets.length / MiB,
      });
    }
    if (created > 0 && shims1.count > shims0.count) {
      rows.push({
        name: `containerd shim PSS per Pod (${shims1.count - shims0.count} new shims)`,
        unit: "MiB",
        value: (shims1.bytes - shims0.bytes) / (shims1.count - shims0.count) / MiB,
      });
    }
    if (created > 0)
      rows.push({
        name: "controller RSS growth per session",
        unit: "KiB",
        value: (rss1 - rss0) / created / 1024,
      });
    return rows;
  } finally {
    await Promise.allSettled(sandboxes.map((s) => s.destroy()));
  }
}
