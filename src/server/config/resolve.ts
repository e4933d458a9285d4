/**
 * Validates a parsed `warden serve` configuration and fills in defaults (defaults.ts). Relative
 * paths in it (stateDir, auditLog, secrets.keyFile and storeFile, policy files, workspace roots)
 * resolve against the file's own directory.
 */

import { resolve } from "node:path";
import { Compile } from "typebox/compile";
import { InvalidArgumentError } from "../../errors.js";
import {
  backendWorkspaceModes,
  DEFAULT_LIMITS,
  HELPER_PIDS_RESERVE,
  minPidsFor,
  PIDS_PER_CONCURRENT_CALL,
  pidsBudgetText,
  resolveBackendConfig,
} from "../../sandbox/index.js";
import { schemaErrorLines } from "../../util/index.js";
import { defaultReplicaId } from "./controller-id.js";
import {
  CONFIG_DEFAULTS,
  DEFAULT_MAX_CONCURRENT_TOOL_CALLS,
  DEFAULT_MAX_CONCURRENT_WORKSPACE_READS,
  DEFAULT_TENANT_MAX_NETWORKED_SESSIONS,
} from "./defaults.js";
import { resolveTenantNetwork } from "./network.js";
import {
  type QuotaConfig,
  type ServerConfigInput,
  ServerConfigSchema,
  type TenantConfigInput,
} from "./schema.js";
import type { ServerConfig, TenantConfig } from "./types.js";

const validator = Compile(ServerConfigSchema);

/**
 * Validates a parsed config object. `baseDir` anchors relative paths; `source` names the file in errors.
 * Throws InvalidArgumentError naming the field, e.g. "config.yaml: /tenants/0/keys/0/sha256 must match pattern …".
 */
export function resolveServerConfig(input: unknown, baseDir: string, source = "config"): ServerConfig {
  if (!validator.Check(input)) {
    const errors = schemaErrorLines(validator.Errors(input), (path) => path || "/").slice(0, 5);
    throw new InvalidArgumentError(`${source}: invalid server configuration: ${errors.join("; ")}.`);
  }
  const cfg = input as ServerConfigInput;
  const seen = new Set<string>();
  const hashes = new Set<string>();
  for (const t of cfg.tenants) {
    if (seen.has(t.id)) throw new InvalidArgumentError(`${source}: tenant id '${t.id}' appears twice.`);
    seen.add(t.id);
    for (const k of t.keys) {
      if (hashes.has(k.sha256)) {
        throw new InvalidArgumentError(
          `${source}: key '${k.id}' of tenant '${t.id}' reuses another key's hash.`,
        );
      }
      hashes.add(k.sha256);
    }
  }
  const defaultImage = cfg.defaultImage ?? CONFIG_DEFAULTS.image;
  const stateDir = resolve(baseDir, cfg.stateDir ?? "warden-state");
  const backend = resolveBackendConfig(cfg.backend, {
    baseDir,
    where: source,
    tenants: cfg.tenants.map((t) => t.id),
    defaultReplicaId: () => defaultReplicaId(stateDir),
  });
  const maxConnections = cfg.maxConnections ?? CONFIG_DEFAULTS.maxConnections;
  const config: ServerConfig = {
    host: cfg.host ?? CONFIG_DEFAULTS.host,
    port: cfg.port ?? CONFIG_DEFAULTS.port,
    stateDir,
    auditLog: resolve(baseDir, cfg.auditLog ?? resolve(stateDir, "audit.jsonl")),
    ...(cfg.auditSigningKey ? { auditSigningKey: resolve(baseDir, cfg.auditSigningKey) } : {}),
    ...(cfg.auditCheckpointEvery ? { auditCheckpointEvery: cfg.auditCheckpointEvery } : {}),
    jsonBodyLimitBytes: cfg.jsonBodyLimitBytes ?? CONFIG_DEFAULTS.jsonBodyLimitBytes,
    tarBodyLimitBytes: cfg.tarBodyLimitBytes ?? CONFIG_DEFAULTS.tarBodyLimitBytes,
    filesMaxBytes: cfg.filesMaxBytes ?? CONFIG_DEFAULTS.filesMaxBytes,
    tarMaxEntries: cfg.tarMaxEntries ?? CONFIG_DEFAULTS.tarMaxEntries,
    maxBufferedBytes: cfg.maxBufferedBytes ?? CONFIG_DEFAULTS.maxBufferedBytes,
    httpRequestTimeoutMs: cfg.httpRequestTimeoutMs ?? CONFIG_DEFAULTS.httpRequestTimeoutMs,
    maxConnections,
    // Unset, it follows a lower maxConnections: the check below is for a value the user chose.
    maxConnectionsPerClient:
      cfg.maxConnectionsPerClient ?? Math.min(CONFIG_DEFAULTS.maxConnectionsPerClient, maxConnections),
    shutdownGraceMs: cfg.shutdownGraceMs ?? CONFIG_DEFAULTS.shutdownGraceMs,
    reapIntervalMs: cfg.reapIntervalMs ?? CONFIG_DEFAULTS.reapIntervalMs,
    approvalTimeoutMs: cfg.approvalTimeoutMs ?? CONFIG_DEFAULTS.approvalTimeoutMs,
    warmPool: {
      size: cfg.warmPool?.size ?? CONFIG_DEFAULTS.warmPool.size,
      maxIdleMs: cfg.warmPool?.maxIdleMs ?? CONFIG_DEFAULTS.warmPool.maxIdleMs,
      maxKeys: cfg.warmPool?.maxKeys ?? CONFIG_DEFAULTS.warmPool.maxKeys,
      networked: cfg.warmPool?.networked ?? CONFIG_DEFAULTS.warmPool.networked,
    },
    backend,
    contendedOutputBytesPerSecond:
      cfg.contendedOutputBytesPerSecond ?? CONFIG_DEFAULTS.contendedOutputBytesPerSecond,
    networkAuditLimit: { ...(cfg.networkAuditLimit ?? CONFIG_DEFAULTS.networkAuditLimit) },
    maxNetworkedSessions: cfg.maxNetworkedSessions ?? CONFIG_DEFAULTS.maxNetworkedSessions,
    ...(cfg.secrets
      ? {
          secrets: {
            keyFile: resolve(baseDir, cfg.secrets.keyFile),
            storeFile: resolve(baseDir, cfg.secrets.storeFile ?? resolve(stateDir, "secrets.json")),
            maxPerTenant: cfg.secrets.maxPerTenant ?? CONFIG_DEFAULTS.secretsPerTenant,
          },
        }
      : {}),
    tenants: cfg.tenants.map((t, i) => {
      const where = `${source}: /tenants/${i}`;
      const tenant = resolveTenant(t, baseDir, defaultImage, where);
      return { ...tenant, workspaceModes: backendWorkspaceModes(backend, t, tenant.workspaceModes, where) };
    }),
  };
  checkBufferBounds(config, source);
  checkConnectionCaps(config, source);
  return config;
}

/**
 * A client's cap set above the server's could never be reached: throws InvalidArgumentError naming
 * both (the default never is: it is at most maxConnections).
 */
function checkConnectionCaps(
  { maxConnections, maxConnectionsPerClient }: ServerConfig,
  source: string,
): void {
  if (maxConnectionsPerClient > maxConnections) {
    throw new InvalidArgumentError(
      `${source}: maxConnectionsPerClient ${maxConnectionsPerClient} is above maxConnections ${maxConnections}, so it could never be reached; ` +
        `lower maxConnectionsPerClient to at most ${maxConnections} or raise maxConnections.`,
    );
  }
}

/**
 * The largest body the server buffers (jsonBodyLimitBytes, filesMaxBytes) must fit the server's
 * and every tenant's maxBufferedBytes, or such a request could never be served: throws
 * InvalidArgumentError naming both fields.
 */
function checkBufferBounds(config: ServerConfig, source: string): void {
  const [largest, name] =
    config.filesMaxBytes >= config.jsonBodyLimitBytes
      ? [config.filesMaxBytes, "filesMaxBytes"]
      : [config.jsonBodyLimitBytes, "jsonBodyLimitBytes"];
  const bounds = [
    { where: "", max: config.maxBufferedBytes },
    ...config.tenants.map((t, i) => ({ where: `/tenants/${i}/quotas/`, max: t.quotas.maxBufferedBytes })),
  ];
  for (const { where, max } of bounds) {
    if (max < largest) {
      throw new InvalidArgumentError(
        `${source}: ${where}maxBufferedBytes ${max} is below ${name} ${largest}, so the largest such body could never be held; ` +
          `raise ${where}maxBufferedBytes to at least ${largest} or lower ${name}.`,
      );
    }
  }
}

function resolveTenant(
  t: TenantConfigInput,
  baseDir: string,
  defaultImage: string,
  where: string,
): TenantConfig {
  const quotas = {
    ...t.quotas,
    maxConcurrentToolCalls: t.quotas.maxConcurrentToolCalls ?? DEFAULT_MAX_CONCURRENT_TOOL_CALLS,
    maxConcurrentWorkspaceReads:
      t.quotas.maxConcurrentWorkspaceReads ?? DEFAULT_MAX_CONCURRENT_WORKSPACE_READS,
    tmpBytes: t.quotas.tmpBytes ?? DEFAULT_LIMITS.tmpBytes,
    pids: t.quotas.pids ?? DEFAULT_LIMITS.pids,
    spillSessionBytes: t.quotas.spillSessionBytes ?? CONFIG_DEFAULTS.spillSessionBytes,
    spillBytes: t.quotas.spillBytes ?? CONFIG_DEFAULTS.spillBytes,
    maxBufferedBytes: t.quotas.maxBufferedBytes ?? CONFIG_DEFAULTS.tenantMaxBufferedBytes,
    maxNetworkedSessions: t.quotas.maxNetworkedSessions ?? DEFAULT_TENANT_MAX_NETWORKED_SESSIONS,
  };
  checkPidsBudget(quotas, where);
  return {
    id: t.id,
    keys: t.keys,
    quotas,
    idleTtlMs: t.idleTtlMs ?? CONFIG_DEFAULTS.idleTtlMs,
    maxLifetimeMs: t.maxLifetimeMs ?? CONFIG_DEFAULTS.maxLifetimeMs,
    policy: (t.policy ?? []).map((p) => resolve(baseDir, p)),
    workspaceRoots: (t.workspaceRoots ?? []).map((p) => resolve(baseDir, p)),
    workspaceModes: t.workspaceModes ?? ["copy", "ro"],
    images: t.images ?? [defaultImage],
    ...(t.network ? { network: resolveTenantNetwork(t.network, baseDir, where) } : {}),
  };
}

/**
 * A batch of `maxConcurrentToolCalls` calls in one session must fit its pids limit: throws
 * InvalidArgumentError naming both quotas when `pids` < minPidsFor(maxConcurrentToolCalls).
 */
function checkPidsBudget(quotas: Required<QuotaConfig>, where: string): void {
  const needed = minPidsFor(quotas.maxConcurrentToolCalls);
  if (quotas.pids < needed) {
    throw new InvalidArgumentError(
      `${where}/quotas: pids ${quotas.pids} is too small for maxConcurrentToolCalls ${quotas.maxConcurrentToolCalls}: ` +
        `${pidsBudgetText(quotas.maxConcurrentToolCalls)}; raise pids to ${needed}${lowerTo(quotas.pids)}.`,
    );
  }
}

/** " or lower maxConcurrentToolCalls to N": the most calls at once `pids` runs ("" for none). */
function lowerTo(pids: number): string {
  const fits = Math.floor((pids - HELPER_PIDS_RESERVE) / PIDS_PER_CONCURRENT_CALL);
  return fits >= 1 ? ` or lower maxConcurrentToolCalls to ${fits}` : "";
}
