/**
 * `warden serve` as a process: load the config, check the engine, load the policies, start the
 * server on the real Docker backend, and shut down gracefully on SIGTERM / SIGINT / SIGHUP (exit 0).
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { pingEngine } from "../sandbox/index.js";
import {
  acquireReplicaLease,
  type ChannelEvent,
  channelEventLine,
  connectCluster,
  loadKubernetesClient,
  type ReplicaLease,
} from "../sandbox/kubernetes/index.js";
import { sweepSpillDirs } from "../session/index.js";
import {
  defaultReplicaId,
  loadServerConfig,
  poolTtlMs,
  type ServerConfig,
  tenantPolicyHashes,
} from "./config/index.js";
import { createServerMetrics, type ServerMetrics } from "./metrics.js";
import { type RunningServer, startServer } from "./server.js";
import type { SessionBackend } from "./sessions/backend.js";
import { createDockerBackend } from "./sessions/docker-backend.js";
import { createPolicyHookFactory, poolState, reconcileLine } from "./sessions/index.js";
import { createKubernetesBackend } from "./sessions/kubernetes-backend.js";
import { lockStateDir } from "./state-lock.js";
import { tenantSpillOptions } from "./tenancy/index.js";
import { checkNamespaces, type TenantClusters, tenantClusters } from "./tenancy/kubernetes-namespaces.js";

/** Command-line overrides of the config file. */
export interface ServeOptions {
  config: string;
  host?: string;
  port?: number;
  onExit?: "keep" | "close";
  /** Where progress lines go (default stderr). */
  log?: (line: string) => void;
}

/** Where the server's sessions keep spill files: under the state dir (0700), not the shared /tmp. */
function spillDirOf(config: ServerConfig): string {
  return join(config.stateDir, "spill");
}

/**
 * The session backend as `warden serve` configures it (Docker, or Kubernetes with `backend.kind:
 * kubernetes`, config/backend.ts): spill files under the state dir, capped per
 * session and per tenant (tenantSpillOptions); the warm pool of `config.warmPool` keyed with each
 * tenant's policy; and (with `metrics`) each new
 * session's sandbox counted in warden_sandbox_starts_total{source="pool"|"cold"}. On Kubernetes
 * a session's exec channel that ended and was re-opened (or not) is logged and counted in
 * warden_channel_reconnects_total{outcome="reopened"|"failed"} (channelEvents). On Kubernetes
 * `options.clusters` are the views of its namespaces runServe already made (their NetworkPolicy
 * already ensured), else they are made from `config.backend` (kubernetesClusters).
 */
export function serveBackend(
  config: ServerConfig,
  options: { log?: (line: string) => void; metrics?: ServerMetrics; clusters?: TenantClusters } = {},
): SessionBackend {
  const { log, metrics } = options;
  const policyHashes = tenantPolicyHashes(config);
  const common = {
    spillDir: spillDirOf(config),
    spillOptions: tenantSpillOptions(config),
    warmPool: { ...config.warmPool, ttlMs: poolTtlMs(config) },
    policyHash: (tenant: string) => policyHashes.get(tenant) ?? "",
    ...(log ? { log } : {}),
    ...(metrics
      ? { onSandboxStart: (source: "pool" | "cold") => metrics.sandboxStarts.inc({ source }) }
      : {}),
  };
  const backend = config.backend ?? { kind: "docker" };
  if (backend.kind === "docker") return createDockerBackend(common);
  const clusters = options.clusters ?? kubernetesClusters(backend, channelEvents(log, metrics));
  return createKubernetesBackend({ ...common, clusters });
}

/**
 * The cluster views of every namespace of a Kubernetes `backend` (connectCluster: reads the
 * kubeconfig); `onChannelEvent` hears of every session's exec channel ending and being re-opened.
 */
function kubernetesClusters(
  backend: Extract<ServerConfig["backend"], { kind: "kubernetes" }>,
  onChannelEvent: (event: ChannelEvent) => void,
): TenantClusters {
  const { kind: _, tenantNamespaces, ...connection } = backend;
  const main = { ...connectCluster(connection), replicaId: backend.replicaId, onChannelEvent };
  return tenantClusters(main, tenantNamespaces);
}

/** Logs each ChannelEvent (channelEventLine) and counts re-opens and failed rounds in `metrics`. */
function channelEvents(log?: (line: string) => void, metrics?: ServerMetrics): (event: ChannelEvent) => void {
  return (event) => {
    log?.(channelEventLine(event));
    if (event.outcome !== "lost") metrics?.channelReconnects.inc({ outcome: event.outcome });
  };
}

/** Starts the server and installs the signal handlers. Resolves once listening. */
export async function runServe(options: ServeOptions): Promise<RunningServer> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const config = await loadServerConfig(options.config);
  if (options.host) config.host = options.host;
  if (options.port !== undefined) config.port = options.port;
  // Before anything touches the state (records, reconcile, spill sweep): one server per state dir.
  await mkdir(config.stateDir, { recursive: true, mode: 0o700 });
  const lock = lockStateDir(config.stateDir);
  let server: RunningServer;
  let lease: ReplicaLease | undefined;
  let clusters: TenantClusters | undefined;
  const metrics = createServerMetrics({ defaults: true });
  try {
    // The backend answers before anything else; on Kubernetes every namespace (the main one and
    // each tenant's) exists, is usable and has its deny-all NetworkPolicy (or what is missing is
    // named) before the first Pod, and this server holds its replica id's Lease, in the main
    // namespace, before reconciling (replica-lease.ts: one live server per id, or each would
    // remove the other's Pods; held by its host and state directory).
    if (config.backend?.kind === "kubernetes") {
      await loadKubernetesClient();
      clusters = kubernetesClusters(config.backend, channelEvents(log, metrics));
      await checkNamespaces(clusters, config.backend.tenantNamespaces);
      lease = await acquireReplicaLease({
        leases: clusters.main.leases,
        namespace: clusters.main.namespace,
        replicaId: config.backend.replicaId,
        holder: defaultReplicaId(config.stateDir),
        log,
      });
    } else await pingEngine();
    const hooks = await createPolicyHookFactory(config);
    const backend = serveBackend(config, { log, metrics, ...(clusters ? { clusters } : {}) });
    server = await startServer({
      config,
      backend,
      metrics,
      hooks,
      lock,
      ...(options.onExit ? { onExit: options.onExit } : {}),
    });
  } catch (err) {
    await lease?.release();
    lock.release();
    throw err;
  }
  // After reconciliation: the sessions it adopted took their spill directories over (their
  // handles stay valid until they close: session/spill-adopt.ts); those of the previous run's
  // other sessions can be read by no one any more, so those whose server process is gone go.
  const live = new Set(server.ctx.registry.all().map((s) => s.record.id));
  const swept = await sweepSpillDirs({ dir: spillDirOf(config), liveSessions: live }).catch((err: Error) => {
    log(`warden serve: the spill directory sweep failed (${err.message}); it runs again at the next start`);
    return [];
  });
  const r = server.reconciled;
  log(
    reconcileLine(
      r,
      swept.length,
      clusters?.all().map((c) => c.namespace),
    ),
  );
  if (r.egressRemoved.length > 0)
    log(`warden serve: removed the egress gateways of ${r.egressRemoved.length} session(s) not adopted`);
  for (const live of server.ctx.registry.all()) {
    const { execPath, channelTransport } = live.session.sandbox.info;
    const carrier = channelTransport ? ` (${channelTransport})` : "";
    log(`warden serve: session ${live.record.id} calls go through ${execPath ?? "docker-exec"}${carrier}`);
  }
  log(
    `warden serve: listening on ${server.url} (${config.tenants.length} tenant(s), state in ${config.stateDir})`,
  );
  const stop = (signal: string) => {
    log(`warden serve: ${signal}, draining (grace ${config.shutdownGraceMs} ms)`);
    const sessions = server.ctx.registry.all().length;
    const spares = poolState(server.ctx.backend).idle;
    server.shutdown().then(
      async () => {
        await lease?.release();
        const kept = options.onExit === "close" ? "closed" : "kept for the next start";
        log(`warden serve: stopped; ${sessions} session(s) ${kept}, ${spares} spare(s) removed`);
        process.exit(0);
      },
      (err: unknown) => {
        log(`warden serve: shutdown failed: ${String(err)}`);
        process.exit(1);
      },
    );
  };
  process.once("SIGTERM", () => stop("SIGTERM"));
  process.once("SIGINT", () => stop("SIGINT"));
  // The terminal it was started from closed: Node's default would end it without draining.
  process.once("SIGHUP", () => stop("SIGHUP"));
  return server;
}
