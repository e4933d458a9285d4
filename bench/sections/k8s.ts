/**
 * Kubernetes section (issue 18): the Kubernetes backend on a real cluster ($KUBECONFIG, else the
 * local one of scripts/ensure-k8s.sh), in namespace $WARDEN_BENCH_K8S_NAMESPACE (default
 * warden-bench, created when missing and then deleted at the end). Rows, each against a baseline of
 * the same run where there is one:
 * - cold session create (hardened Pod, helper's exec channel open and answering, a 10-file workspace copied
 *   in) p50/p99 vs a plain Pod of the same image created and polled until it runs, as warden polls;
 * - warm pool claims (the same workspace copied into a spare Pod) p50/p99, each after the refill
 *   settled, vs the cold create p50;
 * - tool call `bash true` through the pipeline and warden's channel (one long-lived pods/exec stream), and
 *   the bare channel exec, p50/p99 vs one exec through the Kubernetes exec API per call
 *   (client-node Exec, `bash -c true`) on the same Pod;
 * - idle sessions the node holds: created until the first create fails or WARDEN_BENCH_K8S_DENSITY_MAX
 *   (default 300, above the test node's maxPods of 250) are held, with what stopped it (k8s-idle.ts).
 * With fewer than 100 samples a p99 is the largest one, and its row says so. Counts:
 * WARDEN_BENCH_K8S_CREATES (default 30), WARDEN_BENCH_K8S_CLAIMS (30), WARDEN_BENCH_K8S_EXECS (200),
 * WARDEN_BENCH_K8S_IDLE_CONCURRENCY (4). WARDEN_BENCH_K8S_PHASES (comma-separated, of cold, pool, exec,
 * idle; default all) runs only those phases.
 * WARDEN_BENCH_K8S_RUNTIME_CLASS (e.g. gvisor) runs every Pod of the run, the baseline's too, on it.
 * The machine's load average is printed at the start of each phase and at the end. Every Pod of
 * the run carries its tenant label and is deleted at the end, on failure, SIGINT and SIGTERM too; a
 * Pod still there after that fails the section, naming it.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import type { Sandbox } from "../../src/sandbox/index.js";
import { type PoolRequest, WarmPool } from "../../src/sandbox/index.js";
import {
  createKubernetesSandbox,
  deletePod,
  type KubernetesCluster,
  kubernetesPoolBackend,
  loadKubernetesClient,
  podExec,
} from "../../src/sandbox/kubernetes/index.js";
import { createSpillStore, openSession } from "../../src/session/index.js";
import type { Session } from "../../src/session/types.js";
import { builtinTools } from "../../src/tools/index.js";
import { type BenchRow, type BenchSection, p99Name, percentile, timeRuns } from "../harness.js";
import { BENCH_RUNTIME_CLASS, benchCluster, createRawPod, ensureNamespace, sweepRun } from "./k8s-cluster.js";
import { densityRows } from "./k8s-idle.js";

const CREATES = Number(process.env.WARDEN_BENCH_K8S_CREATES ?? 30);
const CLAIMS = Number(process.env.WARDEN_BENCH_K8S_CLAIMS ?? 30);
const EXECS = Number(process.env.WARDEN_BENCH_K8S_EXECS ?? 200);
const DENSITY_MAX = Number(process.env.WARDEN_BENCH_K8S_DENSITY_MAX ?? 300);
const IDLE_CONCURRENCY = Number(process.env.WARDEN_BENCH_K8S_IDLE_CONCURRENCY ?? 4);
const TTL_MS = 3_600_000;
const PHASES = ["cold", "pool", "exec", "idle"] as const;

/** The phases WARDEN_BENCH_K8S_PHASES names (all when unset); throws naming an unknown one. */
function wantedPhases(): Set<string> {
  const asked = (process.env.WARDEN_BENCH_K8S_PHASES ?? PHASES.join(","))
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean);
  const unknown = asked.filter((p) => !(PHASES as readonly string[]).includes(p));
  if (unknown.length > 0)
    throw new Error(
      `WARDEN_BENCH_K8S_PHASES: unknown phase(s) ${unknown.join(", ")}; phases: ${PHASES.join(", ")}`,
    );
  return new Set(asked);
}

function logLoad(phase: string): void {
  const [one, five, fifteen] = loadavg().map((l) => l.toFixed(2));
  console.log(`k8s: load average ${one} / ${five} / ${fifteen} (1/5/15 min) at ${phase}`);
}

/** p50 and p99 rows of `samples`, against `base` samples or a fixed baseline. */
function percentileRows(
  what: string,
  samples: number[],
  baseline: { name: string; samples?: number[]; fixed?: number },
): BenchRow[] {
  return [50, 99].map((p) => ({
    name: p === 50 ? `${what} p50` : p99Name(what, samples.length),
    unit: "ms" as const,
    value: percentile(samples, p),
    baseline: baseline.fixed ?? percentile(baseline.samples ?? [], p),
    baselineName: baseline.name,
  }));
}

/** Cold creates, interleaved with raw Pods so both see the same load; each is deleted untimed. */
async function coldRows(cluster: KubernetesCluster, tenant: string, workspace: string) {
  const raw: number[] = [];
  const cold: number[] = [];
  // One unmeasured round first (first-use costs of the client and the node's image cache).
  for (let i = -1; i < CREATES; i++) {
    const name = `bench-raw-${tenant.slice(-6)}-${i + 1}`;
    const r = await timeRuns(1, () => createRawPod(cluster, name, tenant));
    await deletePod(cluster, name);
    let sandbox: Sandbox | undefined;
    const w = await timeRuns(1, async () => {
      sandbox = await createKubernetesSandbox(
        { tenant, ttlMs: TTL_MS, workspace: { hostPath: workspace } },
        cluster,
      );
    });
    await sandbox?.destroy();
    if (i < 0) continue;
    raw.push(...r);
    cold.push(...w);
  }
  return {
    cold,
    rows: percentileRows("Pod session create", cold, { name: "raw Pod create→Running", samples: raw }),
  };
}

/** Claims from a pool of 2, each after the refill settled (so each is a pooled one), after one unmeasured claim. */
async function poolRows(cluster: KubernetesCluster, tenant: string, workspace: string, coldP50: number) {
  const pool = new WarmPool({ backend: kubernetesPoolBackend({ cluster, tenant }), size: 2 });
  const request: PoolRequest = {
    template: { tenant, ttlMs: TTL_MS },
    claim: { workspace: { hostPath: workspace } },
  };
  try {
    await pool.warm(request);
    await pool.settled();
    const claims: number[] = [];
    let pooled = 0;
    for (let i = -1; i < CLAIMS; i++) {
      const claim = await pool.claim(request);
      await claim.sandbox.destroy();
      await pool.settled();
      if (i < 0) continue;
      claims.push(claim.claimMs);
      if (claim.pooled) pooled++;
    }
    return [
      ...percentileRows("pool claim", claims, { name: "cold create p50", fixed: coldP50 }),
      {
        name: "pool claims served warm",
        unit: "count" as const,
        value: pooled,
        baseline: CLAIMS,
        baselineName: "claims",
      },
    ];
  } finally {
    await pool.drain();
  }
}

/** Tool calls and bare channel execs vs the exec API on one session's Pod, interleaved. */
async function execRows(cluster: KubernetesCluster, session: Session): Promise<BenchRow[]> {
  const pod = session.sandbox.info.containerId;
  const call = (i: number) =>
    session.runToolCalls([{ id: `b${i}`, name: "bash", arguments: { command: "true" } }]);
  const viaApi = async () => {
    const r = await podExec(cluster, pod, ["bash", "-c", "true"]);
    if (r.exitCode !== 0) throw new Error(`exec API: bash -c true exited ${r.exitCode}: ${r.stderr}`);
  };
  const viaChannel = () => session.sandbox.exec({ argv: ["bash", "-c", "true"] });
  await call(-1);
  await viaApi();
  await viaChannel();
  const tool: number[] = [];
  const api: number[] = [];
  const channel: number[] = [];
  for (let i = 0; i < EXECS; i++) {
    tool.push(...(await timeRuns(1, () => call(i))));
    api.push(...(await timeRuns(1, viaApi)));
    channel.push(...(await timeRuns(1, viaChannel)));
  }
  const baseline = { name: "exec API bash -c true", samples: api };
  return [
    ...percentileRows("tool call bash true (exec channel)", tool, baseline),
    ...percentileRows("channel exec bash -c true", channel, baseline),
  ];
}

/** The phases in order (those `wanted`), on one run's tenant; what they create they delete, the sweep is the net. */
async function phases(
  cluster: KubernetesCluster,
  tenant: string,
  workspace: string,
  wanted: Set<string>,
): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  let coldP50 = Number.NaN;
  if (wanted.has("cold")) {
    logLoad("cold creates");
    const cold = await coldRows(cluster, tenant, workspace);
    coldP50 = percentile(cold.cold, 50);
    rows.push(...cold.rows);
  }
  if (wanted.has("pool")) {
    logLoad("pool claims");
    rows.push(...(await poolRows(cluster, tenant, workspace, coldP50)));
  }
  if (wanted.has("exec")) {
    logLoad("tool calls");
    const session = await openSession(
      { tenant, sandbox: { ttlMs: TTL_MS } },
      {
        createSandbox: (spec, identity, call) =>
          createKubernetesSandbox({ ...spec, ...identity, ...call }, cluster),
        createSpillStore,
        builtinTools,
      },
    );
    try {
      rows.push(...(await execRows(cluster, session)));
    } finally {
      await session.close();
    }
  }
  if (wanted.has("idle")) {
    logLoad("idle sessions");
    rows.push(
      ...(await densityRows(cluster, tenant, {
        max: DENSITY_MAX,
        concurrency: IDLE_CONCURRENCY,
        log: (line) => console.log(`k8s: ${line}`),
      })),
    );
  }
  logLoad("the end");
  return rows;
}

export const k8sSection: BenchSection = {
  name: "k8s",
  description:
    "Kubernetes backend: Pod create, pool claim, exec channel vs one exec API call per command, idle sessions per node",
  async run(): Promise<BenchRow[]> {
    const wanted = wantedPhases();
    await loadKubernetesClient();
    const cluster = benchCluster();
    console.log(
      `k8s: every Pod on RuntimeClass ${BENCH_RUNTIME_CLASS ?? "(none: the node's default runtime)"}`,
    );
    const tenant = `bench-k8s-${randomBytes(3).toString("hex")}`;
    const createdNamespace = await ensureNamespace(cluster);
    const workspace = await mkdtemp(join(tmpdir(), "warden-bench-k8s-"));
    for (let i = 0; i < 10; i++) await writeFile(join(workspace, `f${i}.txt`), `file ${i}\n`.repeat(20));
    // Ctrl-C or a kill mid-run: delete the run's Pods before exiting (the raw ones have no expiry for gc).
    const onSignal = (signal: NodeJS.Signals) => {
      console.error(`k8s: ${signal}: deleting the run's Pods`);
      void sweepRun(cluster, tenant, createdNamespace).finally(() => process.exit(130));
    };
    process.once("SIGINT", onSignal).once("SIGTERM", onSignal);
    const outcome = await phases(cluster, tenant, workspace, wanted).then(
      (rows) => ({ rows }),
      (error: unknown) => ({ error }),
    );
    process.off("SIGINT", onSignal).off("SIGTERM", onSignal);
    await rm(workspace, { recursive: true, force: true });
    const left = await sweepRun(cluster, tenant, createdNamespace);
    if (left.length > 0) throw new Error(`Pods of the run still there after the sweep: ${left.join(", ")}`);
    if ("error" in outcome) throw outcome.error;
    return outcome.rows;
  },
};
