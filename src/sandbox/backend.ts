/**
 * The backend seam: where sandboxes come from and how they are found again. One implementation per
 * engine, each in its own folder (docker/, kubernetes/, memory/) and registered once in
 * backends.ts; the warm pool belongs to the backend (as agent-sandbox's SandboxWarmPool belongs to
 * its controller), and the server, the CLI's sessions and the tests reach sandboxes through this
 * interface (docs/architecture.md lists where; `warden gc --namespace` alone calls the Kubernetes
 * folder's gcPods). Shaped after testcontainers-node's ContainerRuntimeClient: one narrow surface, an
 * implementation per runtime. One conformance suite (test/helpers/backend-conformance.ts) runs
 * against every implementation.
 *
 * A sandbox is described in three parts passed apart (types.ts): what it is made from
 * (SandboxSpec), whose it is (SandboxIdentity), and the call's own options (CallOptions).
 */
import type { NetworkOptions } from "../egress/index.js";
import type { GcOptions, GcRemoval } from "./gc-types.js";
import type { ClaimResult } from "./pool/warm-pool.js";
import type { CallOptions, Sandbox, SandboxIdentity, SandboxSpec, WorkspaceMode } from "./types.js";

/** What a backend can give; a spec asking for more is refused (InvalidArgumentError). */
export interface BackendCapabilities {
  /** Workspace modes: Docker all three; Kubernetes `copy` only (no host directory reaches a node). */
  workspaceModes: readonly WorkspaceMode[];
  /** SandboxSpec.mounts (host bind mounts). */
  mounts: boolean;
  /** Network modes. */
  networkModes: readonly NetworkOptions["mode"][];
  /**
   * SandboxSpec.runtime values accepted. On Kubernetes the Pod's RuntimeClass decides what runs it
   * (SandboxInfo.runtime says which): `runsc` is accepted only with one set, and `runc` then runs
   * under that RuntimeClass too.
   */
  runtimes: readonly ("runc" | "runsc")[];
  /** SandboxSpec.execPath values. */
  execPaths: readonly ("channel" | "docker-exec")[];
  /** Whether `claim` can hand over a pre-started sandbox (a warm pool was configured). */
  warmPool: boolean;
}

/** A sandbox the backend manages, as `list` reports it. */
export interface ManagedSandbox {
  /** Docker: the container id. Kubernetes: the Pod name. */
  id: string;
  sessionId: string;
  tenant: string;
  /** The controllerId it was created with. */
  controller: string;
  running: boolean;
  /** Kubernetes: the Pod's namespace (a server may use one per tenant); absent elsewhere. */
  namespace?: string;
}

/** What the controller kept of a sandbox, to take it over again after a restart. */
export interface AdoptRequest {
  /** ManagedSandbox.id. */
  id: string;
  sessionId: string;
  tenant: string;
  image: string;
  workspaceMode: WorkspaceMode;
  /** The host directory copied in at creation: the baseline of changedPaths. */
  workspaceHostPath?: string;
  createdAt: Date;
  expiresAt: Date;
  /** The session's network: an allowlist re-attaches to the session's egress gateway. */
  network?: NetworkOptions;
}

/** Options of `claim`. */
export interface ClaimOptions extends CallOptions {
  /** Identity of the tenant's policy: part of the pool key, so a spare never crosses policies. */
  policyHash?: string;
}

/** What `sweep` may remove: leftovers of crashes, never a sandbox `keep` keeps. */
export interface SweepScope {
  /** Only resources of these tenants. */
  tenants: readonly string[];
  /** Only resources this controller created. */
  controllerId: string;
  /** True for a session whose resources stay (a live or adopted session). */
  keep(sessionId: string, controller: string): boolean;
}

/** Idle spares and backing-off keys of a backend's warm pool (zeros without one). */
export interface PoolStats {
  idle: number;
  backingOff: number;
}

/**
 * What happened to a session's exec channel (KubernetesBackendConfig.onChannelEvent): the
 * Kubernetes backend, whose sandboxes reach their helper over a Pod's exec stream that can end
 * under a live session, reports each end and re-open (kubernetes/reconnect-policy.ts decides the
 * retries). channelEventLine (channel-event.ts) makes its log line.
 */
export interface ChannelEvent {
  /** The Pod's name. */
  pod: string;
  /** The session the Pod serves (its sandbox's sessionId). */
  sessionId: string;
  /**
   * "lost": the stream ended under the live session, a re-open starts; "reopened": a new channel
   * serves (after `attempts` tries); "failed": a round gave up (`final`: the Pod is gone, its
   * stream was corrupted, or the sandbox held its re-opened helper and the Pod was deleted;
   * otherwise the next call tries again).
   */
  outcome: "lost" | "reopened" | "failed";
  /** Why the previous channel ended (its stream's close reason). */
  reason: string;
  /** Channels re-opened for this Pod so far. */
  reconnects: number;
  attempts?: number;
  /** Why the round failed (outcome "failed"). */
  error?: string;
  final?: boolean;
}

/** A Kubernetes backend's settings (plain data; `warden serve`'s `backend:` section, docs/kubernetes.md). */
export interface KubernetesBackendConfig {
  kind: "kubernetes";
  /** The main namespace: sandbox Pods of unmapped tenants, and the replica Leases. */
  namespace: string;
  /** Path of a kubeconfig file. Default: $KUBECONFIG, else ~/.kube/config, else in-cluster. */
  kubeconfig?: string;
  /** The Pods' RuntimeClass (e.g. `gvisor`); absent: the node's default runtime. */
  runtimeClassName?: string;
  imagePullPolicy?: "Always" | "IfNotPresent" | "Never";
  /** How long a Pod may take to start and connect, ms. */
  startTimeoutMs?: number;
  /** Channel heartbeat interval, ms (HEARTBEAT_MS_RANGE). */
  heartbeatMs?: number;
  /** Bound of each API request, ms (REQUEST_TIMEOUT_MS_RANGE). */
  requestTimeoutMs?: number;
  /** This server's replica id: its Pods' `io.warden.replica` label, and its Lease's name. */
  replicaId: string;
  /** Tenant → namespace of its Pods; unmapped tenants use `namespace`. */
  tenantNamespaces?: Readonly<Record<string, string>>;
  /** Who holds the replica Lease (host and state directory: one live server per replica id). */
  leaseHolder: string;
  /** Hears each session's exec channel end and re-open (kubernetes/pod-channel.ts reports them). */
  onChannelEvent?: (event: ChannelEvent) => void;
}

/** What every backend takes besides where its sandboxes run. */
export interface BackendOptions {
  /**
   * Keep `size` idle sandboxes per pool key (tenant, image, limits, mode, policy) once a sandbox of
   * that key was claimed, for at most `maxKeys` keys per tenant (its least recently used key is
   * evicted; default 8). `ttlMs`: the spares' lifetime label, at least the longest session
   * lifetime plus `maxIdleMs`, or claims fall back to a cold start. Absent or size 0: no pool.
   * `networked`: keep spares of sessions with network egress too, at most this many at once over
   * every tenant (default 0: none), each with its started gateway and its own engine network
   * (docs/network.md: 30 on a default Docker engine, which sessions need too); Docker only.
   */
  warmPool?: { size: number; maxIdleMs: number; maxKeys?: number; ttlMs: number; networked?: number };
  /** Diagnostics (pool refill failures, adoption fallbacks), one line each. */
  log?: (line: string) => void;
  /** Called for each claimed sandbox: from the pool, or created cold. */
  onSandboxStart?: (source: "pool" | "cold") => void;
}

/**
 * Creates, claims, adopts, lists and removes sandboxes on one engine. Methods reject with
 * WardenError subclasses (each with a stable code); nothing they reject for is left behind.
 */
export interface SandboxBackend {
  /** The registered name: `docker`, `kubernetes`, `memory`. */
  readonly kind: string;
  readonly capabilities: BackendCapabilities;
  /** Where it keeps sandboxes, for logs: Kubernetes namespaces; empty on Docker. */
  readonly scopes: readonly string[];
  /** A new sandbox, started cold. */
  create(spec: SandboxSpec, identity: SandboxIdentity, options?: CallOptions): Promise<Sandbox>;
  /**
   * A sandbox from the warm pool when the spec can be pooled (copy-mode or no workspace, no
   * network egress) and a spare is idle, else a cold one, as `create`.
   */
  claim(spec: SandboxSpec, identity: SandboxIdentity, options?: ClaimOptions): Promise<ClaimResult>;
  /**
   * Takes over the sandbox `request.id` after a restart: what the dead controller still ran in it
   * is killed (Docker: by a helper of version 2 or later; docs/server-api.md) and its channel
   * re-attached. Resolves null when it cannot be used: not found or unreadable, not running,
   * another tenant's, another session's (a warm-pool spare keeps its `pool-` session label, so
   * one born in the pool is taken whatever session claimed it), another replica's (Kubernetes),
   * without its own non-root uid (Docker), or whose helper does not answer (Kubernetes; Docker
   * falls back to docker exec).
   */
  adopt(request: AdoptRequest, options?: CallOptions): Promise<Sandbox | null>;
  /**
   * The sandboxes of `tenants`, running or not: on Docker and in memory those of every controller
   * (the caller judges `controller`), on Kubernetes only this replica's Pods.
   */
  list(tenants: readonly string[], options?: CallOptions): Promise<ManagedSandbox[]>;
  /**
   * Removes a sandbox `list` reported, and its volumes; resolves when it is already gone (a volume
   * it leaves then is `sweep`'s).
   */
  remove(sandbox: ManagedSandbox, options?: CallOptions): Promise<void>;
  /** `warden gc`: removes sandboxes (and their resources) that are expired or whose owner is gone. */
  gc(options?: GcOptions): Promise<GcRemoval[]>;
  /** Removes what crashes leave beside sandboxes (unused volumes, egress gateways, socket dirs). */
  sweep(scope: SweepScope): Promise<GcRemoval[]>;
  poolStats(): PoolStats;
  /** Drains the warm pool and releases what the backend holds. Idempotent. */
  close(): Promise<void>;
}
