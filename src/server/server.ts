/**
 * Assembles and runs `warden serve`: state dir and session records, audit log, metrics, approvals,
 * sessions, start-up reconciliation with the engine, the reaper, the HTTP listener, and a graceful
 * shutdown (stop accepting; let running calls finish within the grace period, then abort them; close;
 * then the backend's close, which drains the warm pool).
 */
import { mkdir } from "node:fs/promises";
import { type App, buildApp, type ServerContext } from "./app.js";
import { ApprovalBroker } from "./approval-broker.js";
import { type AuditLog, createFileAuditLog } from "./audit.js";
import type { SessionBackend } from "./backend.js";
import type { ServerConfig } from "./config.js";
import { createServerMetrics, type ServerMetrics } from "./metrics.js";
import { type ReconcileReport, reconcile } from "./reconcile.js";
import { RecordStore } from "./record-store.js";
import { type HookFactory, SessionManager } from "./session-manager.js";

/** Options of startServer. `listen: false` builds everything but does not bind (tests use inject). */
export interface StartServerOptions {
  config: ServerConfig;
  backend: SessionBackend;
  hooks?: HookFactory;
  audit?: AuditLog;
  metrics?: ServerMetrics;
  listen?: boolean;
  /** What shutdown does with live sessions: keep them for the next start to adopt (default) or close them. */
  onExit?: "keep" | "close";
  now?: () => number;
}

/** A running server. */
export interface RunningServer {
  app: App;
  ctx: ServerContext;
  manager: SessionManager;
  reconciled: ReconcileReport;
  /** `http://host:port` once listening. */
  url?: string;
  /**
   * Stops accepting, waits up to `graceMs` (default config.shutdownGraceMs) for running batches,
   * aborts the rest, closes the listener, then keeps or closes the sessions per `onExit`. Idempotent.
   */
  shutdown(graceMs?: number): Promise<void>;
}

/** Starts the server. Rejects (EngineUnreachableError, InvalidArgumentError, EADDRINUSE) without leaving anything bound. */
export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const { config } = options;
  await mkdir(config.stateDir, { recursive: true, mode: 0o700 });
  const records = new RecordStore(config.stateDir);
  await records.init();
  const audit = options.audit ?? createFileAuditLog(config.auditLog);
  const metrics = options.metrics ?? createServerMetrics({ defaults: options.listen !== false });
  const approvals = new ApprovalBroker();
  const manager = new SessionManager({
    config,
    backend: options.backend,
    records,
    audit,
    metrics,
    approvals,
    ...(options.hooks ? { hooks: options.hooks } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
  const reconciled = await reconcile(manager, options.now?.() ?? Date.now());
  const ctx: ServerContext = { config, manager, approvals, audit, metrics, state: { draining: false } };
  const app = buildApp(ctx);
  const reaper = setInterval(() => void manager.reap(), config.reapIntervalMs);
  reaper.unref();

  let url: string | undefined;
  if (options.listen !== false) {
    try {
      url = await app.listen({ host: config.host, port: config.port });
    } catch (err) {
      clearInterval(reaper);
      await app.close();
      await options.backend.close?.();
      throw err;
    }
  } else await app.ready();

  let stopping: Promise<void> | undefined;
  const shutdown = (graceMs = config.shutdownGraceMs): Promise<void> => {
    stopping ??= (async () => {
      ctx.state.draining = true;
      clearInterval(reaper);
      const closed = app.close();
      const deadline = Date.now() + graceMs;
      while (manager.runningBatches() > 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
      }
      manager.abortAll();
      await closed;
      if (options.onExit === "close") {
        await Promise.all(manager.registry.all().map((l) => manager.close(l.record.id, "shutdown")));
      }
      await options.backend.close?.();
    })();
    return stopping;
  };
  return { app, ctx, manager, reconciled, ...(url ? { url } : {}), shutdown };
}
