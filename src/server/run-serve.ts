/**
 * `warden serve` as a process: load the config, open the sandbox backend (Docker pings its engine;
 * Kubernetes checks its namespaces and takes the replica Lease), load the policies, start the
 * server, and shut down gracefully on SIGTERM / SIGINT / SIGHUP (exit 0).
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import {
  type BackendConfig,
  type BackendOptions,
  type ChannelEvent,
  channelEventLine,
  openSandboxBackend,
  type SandboxBackend,
} from "../sandbox/index.js";
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
import {
  createPolicyHookFactory,
  poolState,
  reconcileLine,
  type SessionFactory,
  sessionFactory,
} from "./sessions/index.js";
import { lockStateDir } from "./state-lock.js";
import { tenantSpillOptions } from "./tenancy/index.js";

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
 * The sandbox backend as `warden serve` configures it, opened (openSandboxBackend): Docker, or
 * Kubernetes with `backend.kind: kubernetes` (src/sandbox/backends.ts resolveBackendConfig; its Lease held by this host and
 * state directory, defaultReplicaId); the warm pool of `config.warmPool`; and (with `metrics`) each
 * new session's sandbox counted in warden_sandbox_starts_total{source="pool"|"cold"}. On
 * Kubernetes a session's exec channel that ended and was re-opened (or not) is logged and counted
 * in warden_channel_reconnects_total{outcome="reopened"|"failed"} (channelEvents). Rejects what
 * openSandboxBackend rejects (EngineUnreachableError, NotFoundError, SandboxError, ReplicaIdInUseError).
 */
export function openServeBackend(
  config: ServerConfig,
  options: { log?: (line: string) => void; metrics?: ServerMetrics } = {},
): Promise<SandboxBackend> {
  const { log, metrics } = options;
  const backendOptions: BackendOptions = {
    warmPool: { ...config.warmPool, ttlMs: poolTtlMs(config) },
    ...(log ? { log } : {}),
    ...(metrics
      ? { onSandboxStart: (source: "pool" | "cold") => metrics.sandboxStarts.inc({ source }) }
      : {}),
  };
  return openSandboxBackend(backendConfigOf(config, channelEvents(log, metrics)), backendOptions);
}

/** `config.backend` as the registry takes it (Docker when absent). */
function backendConfigOf(config: ServerConfig, onChannelEvent: (event: ChannelEvent) => void): BackendConfig {
  const backend = config.backend ?? { kind: "docker" };
  if (backend.kind === "docker") return { kind: "docker" };
  return {
    ...backend,
    leaseHolder: defaultReplicaId(config.stateDir),
    onChannelEvent,
  };
}

/**
 * The server's sessions on `backend` as `warden serve` opens them: spill files under the state
 * dir, capped per session and per tenant (tenantSpillOptions); warm-pool keys with each tenant's
 * policy (tenantPolicyHashes).
 */
export function serveSessions(config: ServerConfig, backend: SandboxBackend): SessionFactory {
  const policyHashes = tenantPolicyHashes(config);
  return sessionFactory(backend, {
    spillDir: spillDirOf(config),
    spillOptions: tenantSpillOptions(config),
    policyHash: (tenant: string) => policyHashes.get(tenant) ?? "",
  });
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
  const metrics = createServerMetrics({ defaults: true });
  let backend: SandboxBackend | undefined;
  try {
    // The backend answers before anything else: the Docker engine; on Kubernetes every namespace
    // (the main one and each tenant's) exists, is usable and has its deny-all NetworkPolicy (or
    // what is missing is named) before the first Pod, and this server holds its replica id's
    // Lease, in the main namespace, before reconciling (one live server per id, or each would
    // remove the other's Pods; held by its host and state directory; released by close()).
    backend = await openServeBackend(config, { log, metrics });
    const hooks = await createPolicyHookFactory(config);
    server = await startServer({
      config,
      backend,
      sessions: serveSessions(config, backend),
      metrics,
      hooks,
      lock,
      ...(options.onExit ? { onExit: options.onExit } : {}),
    });
  } catch (err) {
    // Releases the Kubernetes Lease (idempotent: startServer closes it too when it fails).
    await backend?.close();
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
  // Docker's scopes are empty: its line counts volumes and socket dirs instead of namespaces.
  const scopes = backend.scopes.length > 0 ? [...backend.scopes] : undefined;
  log(reconcileLine(r, swept.length, scopes));
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
    const spares = poolState(server.ctx.sessions.backend).idle;
    server.shutdown().then(
      async () => {
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
