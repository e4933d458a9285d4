/**
 * Assembles and runs `warden serve`: the state dir's exclusive lock (state-lock.ts), session
 * records, the in-flight journal, the secret store (opened with its key), audit log, metrics, approvals, sessions, the HTTP listener (bound
 * before anything is reconciled, answering 503 STARTING until reconciliation is done), start-up
 * reconciliation with the engine, the reaper, and a graceful shutdown (stop accepting; let running
 * calls finish within the grace period, then abort them; close the connections still open past
 * it; then the backend's close, which drains the warm pool; then the lock is released).
 */
import { mkdir } from "node:fs/promises";
import { WardenError } from "../errors.js";
import { outputShare, type SandboxBackend } from "../sandbox/index.js";
import { createFileAuditLog, loadAuditSigningKey, type ServerAuditLog } from "./audit.js";
import type { ServerConfig } from "./config/index.js";
import { type App, buildApp, drainUntil, type ServerContext } from "./http/index.js";
import { createServerMetrics, type ServerMetrics } from "./metrics.js";
import { SecretStore } from "./secrets/index.js";
import {
  ApprovalBroker,
  closeAllSessions,
  type HookFactory,
  InflightCalls,
  type ReconcileReport,
  RecordStore,
  RunningCalls,
  reapSessions,
  reconcile,
  type SessionFactory,
  sessionContext,
  sessionFactory,
} from "./sessions/index.js";
import { lockStateDir, type StateLock } from "./state-lock.js";

/** How long past the grace shutdown waits for the answers of the calls it aborted, ms. */
const ABORTED_ANSWERS_MS = 1000;

/** Options of startServer. `listen: false` builds everything but does not bind (tests use inject). */
export interface StartServerOptions {
  config: ServerConfig;
  /** Where the sessions' sandboxes come from (openSandboxBackend); closed at shutdown (its warm pool drained). */
  backend: SandboxBackend;
  /**
   * How sessions are opened and re-opened, on `backend` (its `backend`). Default:
   * sessionFactory(backend) (spill files in a temp directory).
   */
  sessions?: SessionFactory;
  hooks?: HookFactory;
  audit?: ServerAuditLog;
  metrics?: ServerMetrics;
  listen?: boolean;
  /** What shutdown does with live sessions: keep them for the next start to adopt (default) or close them. */
  onExit?: "keep" | "close";
  now?: () => number;
  /** The state dir's lock when the caller took it already (runServe); else startServer takes it. */
  lock?: StateLock;
}

/** The configured host:port is taken by another process (EADDRINUSE). */
export class AddressInUseError extends WardenError {
  constructor(host: string, port: number, options?: { cause?: unknown }) {
    super(
      "CONFLICT",
      `Cannot listen on ${host}:${port}: the address is in use by another process. ` +
        "Stop that process, or set another 'port' (or 'host') in the config or pass --port.",
      options,
    );
  }
}

/** A running server. */
export interface RunningServer {
  app: App;
  ctx: ServerContext;
  reconciled: ReconcileReport;
  /** `http://host:port` once listening. */
  url?: string;
  /**
   * Stops accepting and closes idle connections, waits up to `graceMs` (ms, default
   * config.shutdownGraceMs) for running batches and then for the connections still open, aborts
   * the batches left (their answers get up to 1 s more), closes the connections left, then keeps
   * or closes the sessions per `onExit`. Idempotent.
   */
  shutdown(graceMs?: number): Promise<void>;
}

/**
 * Starts the server. Rejects (StateDirLockedError, AddressInUseError, EngineUnreachableError,
 * InvalidArgumentError) without leaving anything bound, locked or reconciled: the lock comes first,
 * the listener second, reconciliation last.
 */
export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const { config } = options;
  await mkdir(config.stateDir, { recursive: true, mode: 0o700 });
  const lock = options.lock ?? lockStateDir(config.stateDir);
  try {
    return await startLocked(options, lock);
  } catch (err) {
    lock.release();
    await options.backend.close();
    throw err;
  }
}

async function startLocked(options: StartServerOptions, lock: StateLock): Promise<RunningServer> {
  const { config } = options;
  // The output share is process-wide: the bytes every session's sandbox sends cross the same cores.
  outputShare.bytesPerSecond = config.contendedOutputBytesPerSecond;
  const records = new RecordStore(config.stateDir);
  await records.init();
  const inflight = new InflightCalls(config.stateDir, config.auditLog);
  await inflight.init();
  // The public half of a checkpoint key made at this start: printed once the server listens.
  let keyNotice: string | undefined;
  const audit =
    options.audit ??
    fileAuditLog(config, (pem, keyId) => {
      keyNotice = `warden serve: audit checkpoints are signed with key ${keyId}, made at this start and never written to disk; its public key (for warden audit verify --public-key):\n${pem}`;
    });
  const metrics = options.metrics ?? createServerMetrics({ defaults: options.listen !== false });
  const calls = new RunningCalls();
  const approvals = new ApprovalBroker(audit, calls);
  // A key that does not open the store stops the start here, before anything listens.
  const secrets = config.secrets ? await SecretStore.open(config.secrets, options.now) : undefined;
  const sessions = sessionContext({
    config,
    sessions: options.sessions ?? sessionFactory(options.backend),
    records,
    audit,
    metrics,
    approvals,
    calls,
    inflight,
    ...(options.hooks ? { hooks: options.hooks } : {}),
    ...(secrets ? { secrets } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
  metrics.execPathSource.current = () => sessions.registry.execPaths();
  const ctx: ServerContext = { ...sessions, state: { draining: false } };
  const app = buildApp(ctx);
  let reconciling = true;
  app.addHook("onRequest", async (_request, reply) => {
    if (!reconciling) return;
    reply.code(503).header("retry-after", "1");
    return reply.send({
      code: "STARTING",
      message: "warden serve is reconciling its sessions with the engine; retry in a moment.",
    });
  });

  let url: string | undefined;
  let reconciled: ReconcileReport;
  try {
    if (options.listen !== false) {
      url = await listen(app, config.host, config.port);
      if (keyNotice) process.stderr.write(keyNotice);
    } else await app.ready();
    reconciled = await reconcile(ctx, options.now?.() ?? Date.now());
  } catch (err) {
    await app.close();
    throw err;
  }
  reconciling = false;
  const reaper = setInterval(() => void reapSessions(ctx), config.reapIntervalMs);
  reaper.unref();

  let stopping: Promise<void> | undefined;
  const shutdown = (graceMs = config.shutdownGraceMs): Promise<void> => {
    stopping ??= (async () => {
      ctx.state.draining = true;
      clearInterval(reaper);
      let listenerClosed = false;
      const closed = app.close().finally(() => {
        listenerClosed = true;
      });
      const deadline = Date.now() + graceMs;
      await drainUntil(app.server, () => ctx.registry.runningBatches() === 0, deadline);
      // Aborted calls still send their answers: they get a moment past the deadline.
      const answering = ctx.registry.abortAll() > 0 ? Date.now() + ABORTED_ANSWERS_MS : 0;
      // The listener's close ends with its last connection; one still sending an answer (read
      // slowly or not at all) would hold it until httpRequestTimeoutMs, so it is cut past the grace.
      await drainUntil(app.server, () => listenerClosed, Math.max(deadline, answering));
      app.server.closeAllConnections();
      await closed;
      if (options.onExit === "close") {
        await closeAllSessions(ctx, "shutdown");
      }
      await options.backend.close();
      audit.checkpointAll?.();
      lock.release();
    })();
    return stopping;
  };
  return { app, ctx, reconciled, ...(url ? { url } : {}), shutdown };
}

/**
 * The chained audit log of `config` (auditLog, auditSigningKey, auditCheckpointEvery). Without an
 * operator key, `onGeneratedKey` gets the public half (PEM) and id of the key made at this start.
 */
function fileAuditLog(
  config: ServerConfig,
  onGeneratedKey: (publicKeyPem: string, keyId: string) => void,
): ServerAuditLog {
  return createFileAuditLog(config.auditLog, {
    ...(config.auditSigningKey ? { signingKey: loadAuditSigningKey(config.auditSigningKey) } : {}),
    ...(config.auditCheckpointEvery ? { checkpointEvery: config.auditCheckpointEvery } : {}),
    onGeneratedKey,
  });
}

/** app.listen with EADDRINUSE turned into AddressInUseError (naming host:port and the config field). */
async function listen(app: App, host: string, port: number): Promise<string> {
  try {
    return await app.listen({ host, port });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EADDRINUSE")
      throw new AddressInUseError(host, port, { cause: err });
    throw err;
  }
}
