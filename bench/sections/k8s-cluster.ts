/**
 * The cluster side of the k8s bench section (k8s.ts): which cluster and namespace it uses, the raw
 * Pod baseline (a plain Pod of the same image, created and polled until it runs exactly as warden's
 * start does), the kubelet's memory figures (summary API, read through the API server's node
 * proxy), and the sweep that leaves no Pod of the run behind. Only the backend's public API
 * (src/sandbox/index.ts) and client-node.
 */
import { existsSync } from "node:fs";
import type { V1Pod } from "@kubernetes/client-node";
import { DEFAULT_IMAGE, LABEL } from "../../src/sandbox/index.js";
import {
  apiStatus,
  connectCluster,
  type KubernetesCluster,
  podProgress,
  WARDEN_POD_SELECTOR,
} from "../../src/sandbox/kubernetes/index.js";
import { type NodeRoom, nodeRoom, type PodRequests, podRequests } from "./k8s-room.js";

/** The kubeconfig: $KUBECONFIG, else the local cluster's (scripts/ensure-k8s.sh). */
export const BENCH_KUBECONFIG = process.env.KUBECONFIG ?? "/var/lib/warden-k8s/admin.kubeconfig";
/** The namespace of every Pod of the run ($WARDEN_BENCH_K8S_NAMESPACE; created when missing). */
export const BENCH_NAMESPACE = process.env.WARDEN_BENCH_K8S_NAMESPACE ?? "warden-bench";
/** Pull policy: Never (the image imported with scripts/k8s-load-image.sh) unless $WARDEN_BENCH_K8S_PULL says. */
const PULL = (process.env.WARDEN_BENCH_K8S_PULL ?? "Never") as "Always" | "IfNotPresent" | "Never";
/** RuntimeClass of every Pod of the run, warden's and the baseline's ($WARDEN_BENCH_K8S_RUNTIME_CLASS, e.g. gvisor). */
export const BENCH_RUNTIME_CLASS = process.env.WARDEN_BENCH_K8S_RUNTIME_CLASS || undefined;
/** How often the raw baseline polls its Pod: as warden's start-pod.ts does (ms). */
const POLL_MS = 250;
const START_TIMEOUT_MS = 90_000;

/** The bench cluster: BENCH_NAMESPACE, pull policy Never, 90 s to start a Pod. */
export function benchCluster(): KubernetesCluster {
  if (!existsSync(BENCH_KUBECONFIG))
    throw new Error(`no kubeconfig at ${BENCH_KUBECONFIG}: run scripts/ensure-k8s.sh or set KUBECONFIG`);
  return connectCluster({
    namespace: BENCH_NAMESPACE,
    kubeconfig: BENCH_KUBECONFIG,
    imagePullPolicy: PULL,
    startTimeoutMs: START_TIMEOUT_MS,
    ...(BENCH_RUNTIME_CLASS ? { runtimeClassName: BENCH_RUNTIME_CLASS } : {}),
  });
}

/**
 * Creates the namespace when missing (after a previous run's deletion has finished, at most 2 min);
 * resolves true when this call created it.
 */
export async function ensureNamespace(cluster: KubernetesCluster): Promise<boolean> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const phase = await cluster.core.readNamespace({ name: cluster.namespace }).then(
      (ns) => ns.status?.phase ?? "Active",
      (err: unknown) => {
        if (apiStatus(err) === 404) return "missing";
        throw new Error(
          `the cluster (${BENCH_KUBECONFIG}) does not answer: ${(err as Error).message}; run scripts/ensure-k8s.sh`,
        );
      },
    );
    if (phase === "missing") break;
    if (phase !== "Terminating") return false;
    if (Date.now() > deadline) throw new Error(`namespace ${cluster.namespace} is still being deleted`);
    await new Promise((r) => setTimeout(r, 1000));
  }
  await cluster.core.createNamespace({ body: { metadata: { name: cluster.namespace } } });
  return true;
}

/** The label selector of every Pod of one run (warden's and the raw baseline's). */
export function runSelector(tenant: string): string {
  return `${LABEL.tenant}=${tenant}`;
}

/**
 * A plain Pod of the sandbox image running `sleep infinity`: no hardening, no helper, labelled with
 * the run's tenant (so the sweep finds it) but not managed by warden.
 */
function rawPod(name: string, tenant: string): V1Pod {
  return {
    metadata: { name, labels: { [LABEL.tenant]: tenant, "io.warden.bench": "raw" } },
    spec: {
      restartPolicy: "Never",
      terminationGracePeriodSeconds: 0,
      ...(BENCH_RUNTIME_CLASS ? { runtimeClassName: BENCH_RUNTIME_CLASS } : {}),
      containers: [
        {
          name: "raw",
          image: DEFAULT_IMAGE,
          imagePullPolicy: PULL,
          command: ["sleep", "infinity"],
          resources: { requests: { cpu: "10m", memory: String(32 * 1024 * 1024) } },
        },
      ],
    },
  };
}

/** Creates a raw Pod and polls it every 250 ms until it runs (the baseline of a cold session create). */
export async function createRawPod(cluster: KubernetesCluster, name: string, tenant: string): Promise<void> {
  const { core, namespace } = cluster;
  await core.createNamespacedPod({ namespace, body: rawPod(name, tenant) });
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    const progress = podProgress(await core.readNamespacedPod({ name, namespace }));
    if (progress.kind === "running") return;
    if (progress.kind === "failed" || Date.now() > deadline)
      throw new Error(
        `raw Pod ${namespace}/${name} did not run: ${progress.detail}${PULL === "Never" ? " (is the image loaded? scripts/k8s-load-image.sh warden-sandbox:latest)" : ""}`,
      );
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** Names of the run's Pods still in the namespace (terminating ones included). */
export async function runPods(cluster: KubernetesCluster, tenant: string): Promise<string[]> {
  const list = await cluster.core.listNamespacedPod({
    namespace: cluster.namespace,
    labelSelector: runSelector(tenant),
  });
  return list.items.map((p) => p.metadata?.name ?? "");
}

/**
 * Deletes every Pod of the run (grace 0) and waits up to 2 min until none is left; resolves the
 * names still there after that (empty when clean). Deletes the namespace too when `dropNamespace`.
 */
export async function sweepRun(
  cluster: KubernetesCluster,
  tenant: string,
  dropNamespace: boolean,
): Promise<string[]> {
  const { core, namespace } = cluster;
  await core.deleteCollectionNamespacedPod({
    namespace,
    labelSelector: runSelector(tenant),
    gracePeriodSeconds: 0,
  });
  const deadline = Date.now() + 120_000;
  let left = await runPods(cluster, tenant);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 500));
    left = await runPods(cluster, tenant);
  }
  if (left.length === 0 && dropNamespace) {
    const others = await core.listNamespacedPod({ namespace, labelSelector: WARDEN_POD_SELECTOR });
    if (others.items.length === 0) await core.deleteNamespace({ name: namespace });
  }
  return left;
}

/** The parts of the kubelet's summary (`/stats/summary`) the bench reads. */
export interface KubeletSummary {
  node?: { nodeName?: string; memory?: { workingSetBytes?: number } };
  pods?: { podRef?: { name?: string; namespace?: string }; memory?: { workingSetBytes?: number } }[];
}

/** The kubelet summary of the node the Pods run on, through the API server's node proxy. */
export async function kubeletSummary(cluster: KubernetesCluster, node: string): Promise<KubeletSummary> {
  const text = await cluster.core.connectGetNodeProxyWithPath({ name: node, path: "stats/summary" });
  return (typeof text === "string" ? JSON.parse(text) : text) as KubeletSummary;
}

/**
 * The memory working set (bytes) of each of `names` in `namespace` that the summary reports with a
 * non-zero memory figure (pure). The kubelet's stats lag a new Pod by up to its housekeeping
 * interval (it reports 0 until then), so a Pod may be missing; the caller compares the count.
 */
export function podWorkingSets(
  summary: KubeletSummary,
  namespace: string,
  names: ReadonlySet<string>,
): number[] {
  const sets: number[] = [];
  for (const pod of summary.pods ?? []) {
    const ref = pod.podRef;
    const bytes = pod.memory?.workingSetBytes;
    // 0: the kubelet has not sampled the Pod's cgroup yet (it reports zeros until its first pass).
    if (ref?.namespace === namespace && names.has(ref.name ?? "") && typeof bytes === "number" && bytes > 0)
      sets.push(bytes);
  }
  return sets;
}

/** Name of the node a Pod of the run was scheduled on (the cluster's only node here). */
export async function nodeOf(cluster: KubernetesCluster, pod: string): Promise<string> {
  const read = await cluster.core.readNamespacedPod({ name: pod, namespace: cluster.namespace });
  const node = read.spec?.nodeName;
  if (!node) throw new Error(`Pod ${pod} has no node`);
  return node;
}

/**
 * How many more Pods requesting `each` the scheduler would place on `node` now, by each of its
 * bounds (k8s-room.ts's nodeRoom over the node and every Pod of the cluster).
 */
export async function nodeRoomNow(
  cluster: KubernetesCluster,
  node: string,
  each: PodRequests,
): Promise<NodeRoom> {
  const read = await cluster.core.readNode({ name: node });
  const pods = await cluster.core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${node}` });
  return nodeRoom(read, pods.items, each);
}

/** The requests of Pod `name` of the run (as the API stored them). */
export async function runPodRequests(cluster: KubernetesCluster, name: string): Promise<PodRequests> {
  return podRequests(await cluster.core.readNamespacedPod({ name, namespace: cluster.namespace }));
}
