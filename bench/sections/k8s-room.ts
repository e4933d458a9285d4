/**
 * Pure arithmetic of the k8s bench's density phase (k8s-idle.ts): how many more Pods like one of
 * the run's the scheduler would place on a node, by each of its bounds (the node's `pods`
 * allocatable, i.e. the kubelet's maxPods, and its CPU and memory allocatable against the Pods'
 * requests, as kube-scheduler's NodeResourcesFit and the kubelet's admission count them: every Pod
 * bound to the node that has not ended, its containers' requests plus its overhead), and the
 * least-squares slope of the controller's RSS over the sessions held.
 */
import type { V1Node, V1Pod } from "@kubernetes/client-node";
import { quantityToScalar } from "@kubernetes/client-node/dist/util.js";

/** A Pod's requests: CPU in millicores, memory in bytes. */
export interface PodRequests {
  cpuMilli: number;
  memoryBytes: number;
}

/** How many more Pods fit by each bound, and the smallest with its name. */
export interface NodeRoom {
  /** Pods on the node now (any namespace, not ended). */
  placed: number;
  /** By the node's `pods` allocatable (the kubelet's maxPods) less the Pods on it. */
  maxPods: number;
  /** By CPU allocatable less the requests of the Pods on it, over one Pod's CPU request. */
  cpu: number;
  /** By memory allocatable less the requests of the Pods on it, over one Pod's memory request. */
  memory: number;
  /** The smallest of the three. */
  room: number;
  /** Which bound gives `room` ("maxPods", "CPU requests" or "memory requests"; the first on a tie). */
  bound: "maxPods" | "CPU requests" | "memory requests";
}

/** A quantity ("10m", "2", "32Mi", "24581184Ki") as a number of base units (cores, bytes); 0 when absent. */
export function quantity(q: string | undefined): number {
  return q === undefined ? 0 : Number(quantityToScalar(q));
}

/**
 * The requests of `pod` (pure): the sum of its containers' requests, or an init container's when
 * larger (they run one at a time, before the others), plus spec.overhead (a RuntimeClass's).
 */
export function podRequests(pod: V1Pod): PodRequests {
  const of = (resource: "cpu" | "memory") => {
    const spec = pod.spec;
    const main = (spec?.containers ?? []).reduce(
      (t, c) => t + quantity(c.resources?.requests?.[resource]),
      0,
    );
    const init = Math.max(
      0,
      ...(spec?.initContainers ?? []).map((c) => quantity(c.resources?.requests?.[resource])),
    );
    return Math.max(main, init) + quantity(spec?.overhead?.[resource]);
  };
  return { cpuMilli: Math.round(of("cpu") * 1000), memoryBytes: of("memory") };
}

/** Whether `pod` still holds its place on its node (pure): bound to it and not Succeeded or Failed. */
export function holdsPlace(pod: V1Pod, node: string): boolean {
  const phase = pod.status?.phase;
  return pod.spec?.nodeName === node && phase !== "Succeeded" && phase !== "Failed";
}

/**
 * How many more Pods requesting `each` fit on `node` beside `pods` (all the cluster's Pods, any
 * namespace; those not on the node or ended are skipped), by each bound (pure). A request of 0
 * puts no bound on that resource (Infinity).
 */
export function nodeRoom(node: V1Node, pods: readonly V1Pod[], each: PodRequests): NodeRoom {
  const name = node.metadata?.name ?? "";
  const allocatable = node.status?.allocatable ?? {};
  const placed = pods.filter((p) => holdsPlace(p, name));
  const used = placed
    .map(podRequests)
    .reduce((t, r) => ({ cpuMilli: t.cpuMilli + r.cpuMilli, memoryBytes: t.memoryBytes + r.memoryBytes }), {
      cpuMilli: 0,
      memoryBytes: 0,
    });
  const howMany = (free: number, one: number) => (one > 0 ? Math.max(0, Math.floor(free / one)) : Infinity);
  const maxPods = Math.max(0, quantity(allocatable.pods) - placed.length);
  const cpu = howMany(Math.round(quantity(allocatable.cpu) * 1000) - used.cpuMilli, each.cpuMilli);
  const memory = howMany(quantity(allocatable.memory) - used.memoryBytes, each.memoryBytes);
  const bounds = [
    ["maxPods", maxPods],
    ["CPU requests", cpu],
    ["memory requests", memory],
  ] as const;
  const [bound, room] = bounds.reduce((a, b) => (b[1] < a[1] ? b : a));
  return { placed: placed.length, maxPods, cpu, memory, room, bound };
}

/** Least-squares slope of y over x (pure); NaN with fewer than two distinct x. */
export function slope(points: readonly { x: number; y: number }[]): number {
  const n = points.length;
  const mx = points.reduce((t, p) => t + p.x, 0) / n;
  const my = points.reduce((t, p) => t + p.y, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (const p of points) {
    sxy += (p.x - mx) * (p.y - my);
    sxx += (p.x - mx) ** 2;
  }
  return sxx > 0 ? sxy / sxx : Number.NaN;
}
