/**
 * `warden serve` as a process: load the config, check the engine, load the policies, start the
 * server on the real Docker backend, and shut down gracefully on SIGTERM / SIGINT (exit 0).
 */
import { join } from "node:path";
import { pingEngine } from "../sandbox/index.js";
import { sweepSpillDirs } from "../session/spill-sweep.js";
import type { SessionBackend } from "./backend.js";
import { loadServerConfig, poolTtlMs, type ServerConfig, tenantPolicyHashes } from "./config.js";
import { createDockerBackend } from "./docker-backend.js";
import { createServerMetrics, type ServerMetrics } from "./metrics.js";
import { createPolicyHookFactory } from "./policy-hooks.js";
import { type RunningServer, startServer } from "./server.js";
import { tenantSpillOptions } from "./spill-quota.js";

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
 * The Docker backend as `warden serve` configures it: spill files under the state dir, capped per
 * session and per tenant (tenantSpillOptions); the warm pool of `config.warmPool` keyed with each
 * tenant's policy; and (with `metrics`) each new
 * session's sandbox counted in warden_sandbox_starts_total{source="pool"|"cold"}.
 */
export function serveBackend(
  config: ServerConfig,
  options: { log?: (line: string) => void; metrics?: ServerMetrics } = {},
): SessionBackend {
  const { log, metrics } = options;
  const policyHashes = tenantPolicyHashes(config);
  return createDockerBackend({
    spillDir: spillDirOf(config),
    spillOptions: tenantSpillOptions(config),
    warmPool: { ...config.warmPool, ttlMs: poolTtlMs(config) },
    policyHash: (tenant) => policyHashes.get(tenant) ?? "",
    ...(log ? { log } : {}),
    ...(metrics ? { onSandboxStart: (source) => metrics.sandboxStarts.inc({ source }) } : {}),
  });
}

/** Starts the server and installs the signal handlers. Resolves once listening. */
export async function runServe(options: ServeOptions): Promise<RunningServer> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const config = await loadServerConfig(options.config);
  if (options.host) config.host = options.host;
  if (options.port !== undefined) config.port = options.port;
  await pingEngine();
  const hooks = await createPolicyHookFactory(config);
  // Spill files of a previous run's sessions cannot be read by anyone any more (a spill store only
  // serves files it wrote): remove those whose server process is gone.
  const swept = await sweepSpillDirs({ dir: spillDirOf(config) });
  const metrics = createServerMetrics({ defaults: true });
  const backend = serveBackend(config, { log, metrics });
  const server = await startServer({
    config,
    backend,
    metrics,
    hooks,
    ...(options.onExit ? { onExit: options.onExit } : {}),
  });
  const r = server.reconciled;
  log(
    `warden serve: adopted ${r.adopted.length}, dropped ${r.dropped.length}, removed ${r.orphansRemoved.length} orphan(s), ${r.volumesRemoved.length} volume(s), ${swept.length} spill dir(s)`,
  );
  log(
    `warden serve: listening on ${server.url} (${config.tenants.length} tenant(s), state in ${config.stateDir})`,
  );
  const stop = (signal: string) => {
    log(`warden serve: ${signal}, draining (grace ${config.shutdownGraceMs} ms)`);
    const sessions = server.manager.registry.all().length;
    const spares = backend.idleSpares?.() ?? 0;
    server.shutdown().then(
      () => {
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
  return server;
}
