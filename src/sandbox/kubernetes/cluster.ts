/**
 * The cluster a Kubernetes sandbox lives on: the API clients (@kubernetes/client-node), the
 * namespace, the RuntimeClass and the image pull policy, and the one table that maps the API's
 * failures to WardenError subclasses (as errors.ts's fromDockerError does for Docker).
 */
import type {
  CoordinationV1Api,
  CoreV1Api,
  Exec,
  NetworkingV1Api,
  setHeaderOptions,
  V1Pod,
} from "@kubernetes/client-node";
import {
  InvalidArgumentError,
  NoRoomError,
  NotFoundError,
  SandboxError,
  type WardenError,
} from "../../errors.js";
import type { ChannelEvent } from "../backend.js";
import { kubernetesClient } from "./client.js";
import { requireLabelValue } from "./pod-labels.js";
import {
  boundedConfiguration,
  boundedExec,
  DEFAULT_REQUEST_TIMEOUT_MS,
  REQUEST_TIMEOUT_MS_RANGE,
  requestDeadline,
} from "./request-deadline.js";

/** Where sandbox Pods are made and how. */
export interface KubernetesCluster {
  /** The generated API clients: each request has a deadline (request-deadline.ts, backend.requestTimeoutMs). */
  core: CoreV1Api;
  /** The namespace's deny-all NetworkPolicy (network-policy.ts). */
  networking: NetworkingV1Api;
  /** Leases (coordination.k8s.io): a serve replica's hold on its id (replica-lease.ts). */
  leases: CoordinationV1Api;
  /** pods/exec: the channel (transport.ts) and one-shot commands (pod-exec.ts podExec). */
  exec: Exec;
  /** Request options of a JSON merge patch (RFC 7386), for the `patchNamespaced…` calls. */
  mergePatch: ReturnType<typeof setHeaderOptions>;
  namespace: string;
  /** RuntimeClass of every Pod (e.g. `gvisor`); none: the node's default runtime. */
  runtimeClassName?: string;
  /** Pull policy of sandbox images: IfNotPresent (default), or Never for images imported into the node. */
  imagePullPolicy?: "Always" | "IfNotPresent" | "Never";
  /** How long a new Pod may take to run (ms). Default 120 s. */
  startTimeoutMs?: number;
  /** The `warden serve` replica whose Pods these are (pod-labels.ts POD_REPLICA); none outside a server. */
  replicaId?: string;
  /**
   * Ping a session's helper after this long without traffic on its exec stream (ms), so the CRI
   * streaming server never closes it as idle (pod-channel.ts). Default DEFAULT_HEARTBEAT_MS, 60 s.
   */
  heartbeatMs?: number;
  /** Told when a session's exec channel was re-opened, or could not be (pod-channel.ts): logs and metrics. */
  onChannelEvent?: (event: ChannelEvent) => void;
}

/** Options of connectCluster. */
export interface KubernetesClusterOptions {
  namespace: string;
  /** Path of a kubeconfig file. Default: $KUBECONFIG, else ~/.kube/config, else in-cluster. */
  kubeconfig?: string;
  runtimeClassName?: string;
  imagePullPolicy?: KubernetesCluster["imagePullPolicy"];
  startTimeoutMs?: number;
  replicaId?: string;
  heartbeatMs?: number;
  /**
   * How long each request of `core`, `networking` and `leases` may take, body included (ms), an
   * integer in REQUEST_TIMEOUT_MS_RANGE; default DEFAULT_REQUEST_TIMEOUT_MS, 30 s. A request past it
   * rejects KubernetesRequestTimeoutError (request-deadline.ts). Opening a pods/exec stream has the
   * same limit (boundedExec); an open stream has none.
   */
  requestTimeoutMs?: number;
}

/** Bounds of KubernetesCluster.heartbeatMs: 1 s to 1 h. */
export const HEARTBEAT_MS_RANGE = { min: 1000, max: 3_600_000 } as const;

// A DNS-1123 label: what Kubernetes takes as a namespace name.
const DNS_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** Whether `name` can name a Kubernetes namespace (a DNS-1123 label: at most 63 of a-z 0-9 -, alphanumeric at both ends). */
export function isNamespaceName(name: string): boolean {
  return DNS_LABEL.test(name);
}

/**
 * The clients of the cluster `options` names. Reading the kubeconfig is the only I/O; nothing
 * is asked of the API server yet. Throws InvalidArgumentError for a bad namespace, RuntimeClass
 * name, replica id, heartbeatMs (an integer in HEARTBEAT_MS_RANGE) or requestTimeoutMs (an integer
 * in REQUEST_TIMEOUT_MS_RANGE), or an unreadable kubeconfig; Error when the kubeconfig has no
 * current cluster, or when loadKubernetesClient (client.ts: the API client is loaded on demand) was not awaited.
 */
export function connectCluster(options: KubernetesClusterOptions): KubernetesCluster {
  if (!isNamespaceName(options.namespace)) {
    throw new InvalidArgumentError(
      `backend.namespace ${JSON.stringify(options.namespace)} is not a Kubernetes namespace name (lower-case letters, digits and '-', at most 63).`,
    );
  }
  if (
    options.runtimeClassName !== undefined &&
    !/^[a-z0-9][a-z0-9.-]{0,252}$/.test(options.runtimeClassName)
  ) {
    throw new InvalidArgumentError(
      `backend.runtimeClassName ${JSON.stringify(options.runtimeClassName)} is not a RuntimeClass name (e.g. gvisor).`,
    );
  }
  const { heartbeatMs, requestTimeoutMs = DEFAULT_REQUEST_TIMEOUT_MS } = options;
  if (heartbeatMs !== undefined)
    requireMsIn(
      "heartbeatMs",
      heartbeatMs,
      HEARTBEAT_MS_RANGE,
      "ms between pings of an idle session's helper",
      "keep it well below the node's streaming idle timeout (containerd stream_idle_timeout, default 4 h), e.g. 60000",
    );
  requireMsIn(
    "requestTimeoutMs",
    requestTimeoutMs,
    REQUEST_TIMEOUT_MS_RANGE,
    "ms a Kubernetes API request may take",
    "e.g. 30000 (kube-apiserver's own --request-timeout is 60 s)",
  );
  const k8s = kubernetesClient();
  const config = new k8s.KubeConfig();
  try {
    if (options.kubeconfig) config.loadFromFile(options.kubeconfig);
    else config.loadFromDefault();
  } catch (err) {
    throw new InvalidArgumentError(
      `Cannot load the kubeconfig ${options.kubeconfig ?? "(default)"}: ${(err as Error).message}. Pass backend.kubeconfig with a readable file.`,
    );
  }
  const bounded = boundedConfiguration(k8s, config, requestTimeoutMs);
  return {
    core: new k8s.CoreV1Api(bounded),
    networking: new k8s.NetworkingV1Api(bounded),
    leases: new k8s.CoordinationV1Api(bounded),
    exec: boundedExec(k8s, config, requestTimeoutMs),
    mergePatch: k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    namespace: options.namespace,
    ...(options.runtimeClassName ? { runtimeClassName: options.runtimeClassName } : {}),
    ...(options.imagePullPolicy ? { imagePullPolicy: options.imagePullPolicy } : {}),
    ...(options.startTimeoutMs ? { startTimeoutMs: options.startTimeoutMs } : {}),
    ...(options.replicaId ? { replicaId: requireLabelValue(options.replicaId, "replicaId") } : {}),
    ...(heartbeatMs !== undefined ? { heartbeatMs } : {}),
  };
}

/** Throws InvalidArgumentError unless `value` is an integer in `range`: what it means, and a sound value. */
function requireMsIn(
  field: string,
  value: number,
  range: { min: number; max: number },
  meaning: string,
  advice: string,
): void {
  if (Number.isInteger(value) && value >= range.min && value <= range.max) return;
  throw new InvalidArgumentError(
    `backend.${field} ${JSON.stringify(value)} is not an integer from ${range.min} to ${range.max} (${meaning}); ${advice}.`,
  );
}

/** The HTTP status of an API failure (client-node's ApiException `code`), or undefined. */
export function apiStatus(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "number" ? code : undefined;
}

/** The API's own message (a Status body's `message`), else the error's. */
function apiMessage(err: unknown): string {
  const body = (err as { body?: unknown } | null)?.body;
  if (typeof body === "string") {
    try {
      const parsed = JSON.parse(body) as { message?: unknown };
      if (typeof parsed.message === "string") return parsed.message;
    } catch {
      // not JSON: fall through
    }
  }
  return err instanceof Error ? err.message : String(err);
}

/**
 * The namespace's ResourceQuota refused an object (the API's 403 "exceeded quota"): no room until
 * sessions or spares there end or the quota is raised (a NoRoomError: HTTP 503 in `warden serve`).
 * `quota` is the API's message. The warm pool backs off on it as on an unschedulable spare
 * (pool.ts `noRoom`).
 */
export class ResourceQuotaExceededError extends NoRoomError {
  constructor(
    what: string,
    readonly quota: string,
    cause?: unknown,
  ) {
    super(
      `${what}: the namespace's ResourceQuota is used up (${quota}); end sessions or warm pool spares there, or raise the quota (kubectl describe resourcequota).`,
      { cause },
    );
  }
}

/**
 * Maps a Kubernetes API failure to a WardenError: 404 NotFoundError, 403 from the ResourceQuota
 * admission plugin (its message says "exceeded quota") ResourceQuotaExceededError (a NoRoomError) naming the quota, other 401/403
 * SandboxError naming RBAC, anything else (conflicts, refused connections, invalid objects) SandboxError with the
 * API's message. `what` says what was being done ("creating Pod warden-…"); `fix` what a 401/403
 * asks the operator to do (default: grant the Pod rights every sandbox needs).
 */
export function fromKubeError(
  err: unknown,
  what: string,
  fix = "give the kubeconfig's user rights on pods and pods/exec in the namespace",
): WardenError {
  const status = apiStatus(err);
  const message = apiMessage(err);
  if (status === 404) return new NotFoundError(`${what}: not found (${message}).`);
  if (status === 403 && message.includes("exceeded quota"))
    return new ResourceQuotaExceededError(what, message, err);
  if (status === 401 || status === 403) {
    return new SandboxError(`${what}: refused by the API server (${status}: ${message}); ${fix}.`, {
      cause: err,
    });
  }
  return new SandboxError(`${what} failed: ${message}`, { cause: err });
}

/** How long one GET of a Pod may take by default (ms), when the clients' own deadline is later. */
export const POD_READ_TIMEOUT_MS = 5000;

/**
 * One GET of Pod `name` in the cluster's namespace, bounded by `timeoutMs` as well as by the
 * clients' deadline (request-deadline.ts requestDeadline; the earlier fires): null when the API
 * answers 404; rejects with any other failure (the client's ApiException, or a
 * KubernetesRequestTimeoutError naming podReadTimeoutMs or backend.requestTimeoutMs).
 */
export async function readPodWithin(
  cluster: KubernetesCluster,
  name: string,
  timeoutMs = POD_READ_TIMEOUT_MS,
): Promise<V1Pod | null> {
  try {
    return await cluster.core.readNamespacedPod(
      { name, namespace: cluster.namespace },
      requestDeadline(timeoutMs, "podReadTimeoutMs"),
    );
  } catch (err) {
    if (apiStatus(err) === 404) return null;
    throw err;
  }
}
