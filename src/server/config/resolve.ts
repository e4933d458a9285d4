/**
 * Loads and validates the `warden serve` configuration (YAML or JSON) and fills in defaults.
 * Relative paths in the file (stateDir, auditLog, policy files, workspace roots) resolve against
 * the file's own directory.
 */

import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { Compile } from "typebox/compile";
import { parse as parseYaml } from "yaml";
import { type AuditLimit, DEFAULT_AUDIT_LIMIT } from "../../egress/index.js";
import { InvalidArgumentError } from "../../errors.js";
import { DEFAULT_APPROVAL_TIMEOUT_MS } from "../../policy/index.js";
import {
  DEFAULT_CONTENDED_OUTPUT_BYTES_PER_SECOND,
  DEFAULT_LIMITS,
  HELPER_PIDS_RESERVE,
  minPidsFor,
  PIDS_PER_CONCURRENT_CALL,
  pidsBudgetText,
  type WorkspaceMode,
} from "../../sandbox/index.js";
import { DEFAULT_SPILL_SESSION_MAX_BYTES } from "../../session/index.js";
import { schemaErrorLines } from "../../util/index.js";
import { DEFAULT_TAR_MAX_ENTRIES } from "../http/tar-upload.js";
import { type BackendConfig, backendWorkspaceModes, resolveBackendConfig } from "./backend.js";
import {
  type QuotaConfig,
  type ServerConfigInput,
  ServerConfigSchema,
  type TenantConfigInput,
} from "./schema.js";
import { resolveTenantNetwork, type TenantNetwork } from "./network.js";

const MiB = 1024 * 1024;

/** A tenant with every default applied. Lifetimes in ms. */
export interface TenantConfig {
  id: string;
  keys: { id: string; sha256: string }[];
  /**
   * The quotas; `tmpBytes` and `pids` default to the sandbox defaults (64 MiB, 256),
   * `maxConcurrentToolCalls` to DEFAULT_MAX_CONCURRENT_TOOL_CALLS (64), `maxConcurrentWorkspaceReads`
   * to DEFAULT_MAX_CONCURRENT_WORKSPACE_READS (2), `spillSessionBytes` to 256 MiB,
   * `spillBytes` (all live sessions together) to 1 GiB, `maxBufferedBytes` to 64 MiB and
   * `maxNetworkedSessions` to DEFAULT_TENANT_MAX_NETWORKED_SESSIONS (5).
   */
  quotas: Required<QuotaConfig>;
  idleTtlMs: number;
  maxLifetimeMs: number;
  /** Absolute paths of the tenant's policy layer files, highest layer first. */
  policy: string[];
  /** What the tenant's sessions may ask to reach (network-config.ts); none: no network. */
  network?: TenantNetwork;
  /** Absolute host directories (and everything under them) the tenant may use as a workspace. */
  workspaceRoots: string[];
  workspaceModes: WorkspaceMode[];
  /** Images the tenant may run; the first is its default. */
  images: string[];
}

/** The resolved configuration. Sizes in bytes, times in ms. */
export interface ServerConfig {
  host: string;
  port: number;
  stateDir: string;
  auditLog: string;
  jsonBodyLimitBytes: number;
  tarBodyLimitBytes: number;
  /** Largest file written or read through /v1/sessions/:id/files, bytes. */
  filesMaxBytes: number;
  /** Most entries of an uploaded workspace tar (files, directories, links). */
  tarMaxEntries: number;
  /** Request bodies and file reads of all tenants held in memory at once, bytes (buffered-bytes.ts). */
  maxBufferedBytes: number;
  /**
   * Time a client has to send a whole request, headers and body, ms: Node's server.requestTimeout;
   * past it Node answers 408 and closes the connection.
   */
  httpRequestTimeoutMs: number;
  /** Connections open at once, all clients together (connections.ts); over it → 503 and closed. */
  maxConnections: number;
  /**
   * Connections open at once from one remote address; over it → 503 and closed. Default 256, or
   * maxConnections when that is lower; set explicitly above maxConnections it is refused.
   */
  maxConnectionsPerClient: number;
  /**
   * How long shutdown waits for running batches and then for open connections, ms: past it the
   * batches are aborted, their answers get up to 1 s more (server.ts ABORTED_ANSWERS_MS), and the
   * connections still open are closed (an answer still being sent too).
   */
  shutdownGraceMs: number;
  reapIntervalMs: number;
  /** How long a call whose policy decision is `ask` waits for an answer over HTTP, ms. */
  approvalTimeoutMs: number;
  /** Idle pre-started sandboxes per pool key (size 0: off), their maximum idle age (ms), and the keys kept. */
  warmPool: { size: number; maxIdleMs: number; maxKeys: number };
  /** Where sessions run: Docker (also when absent) or a Kubernetes namespace (backend-config.ts). */
  backend?: BackendConfig;
  /**
   * Rate of the bytes one session's sandbox sends the server (command output, file reads) while
   * another session has a request in flight, bytes/s; 0: no limit (src/sandbox output-share.ts).
   */
  contendedOutputBytesPerSecond: number;
  /** Per-session bound on egress audit records (src/egress audit-limit.ts); over it, one summary line per window. */
  networkAuditLimit: AuditLimit;
  /** Live sessions with network egress at once, all tenants together (network-slots.ts). */
  maxNetworkedSessions: number;
  tenants: TenantConfig[];
}

/**
 * Default of `maxConnections`: 4,096. A connection costs the server memory before its headers are
 * parsed: 4,096 admitted with unfinished headers grew a server by 18.8 MiB in an attack on
 * 2026-12-03 (an earlier one measured 72 MiB for 3,000 without caps), so the cap bounds that at
 * tens of MiB, and it stays below the open-file limits servers usually get (Node raises its soft
 * limit to the hard one, often 4,096 or more), leaving descriptors for the engine, files and logs.
 */
export const DEFAULT_MAX_CONNECTIONS = 4096;

/**
 * Default of `maxConnectionsPerClient`: 256 (or maxConnections when that is lower), four times a
 * tenant's default maxConcurrentToolCalls (64), room for one client's batches, their event streams
 * and file transfers at once, while one address (an IPv6 /64: connections.ts clientOf) can take at
 * most a sixteenth of the default maxConnections. Clients behind one NAT or proxy share an address: raise it (up to
 * maxConnections) for a server that sits behind a proxy.
 */
export const DEFAULT_MAX_CONNECTIONS_PER_CLIENT = 256;

/**
 * Defaults: 127.0.0.1:8080, 30 min idle TTL, 8 h lifetime, 1 MiB JSON, 256 MiB tar of at most
 * 100,000 entries, 8 MiB files, 256 MiB of bodies and file reads held at once (64 MiB per tenant),
 * 120 s to send a request, 4,096 connections open at once of which 256 from one address, 10 s grace,
 * 5 min for an approval,
 * a warm pool of 1 idle sandbox per key (filled after the key's first session) kept up to 10 min,
 * for at most 8 keys per tenant; spill files capped at 256 MiB per session and 1 GiB per tenant;
 * a session's output paced to 16 MiB/s while another session has a call running; egress audit
 * records of a session bounded to 10 per second with bursts of 200; at most 20 sessions with
 * network egress at once (5 per tenant: DEFAULT_TENANT_MAX_NETWORKED_SESSIONS).
 */
export const CONFIG_DEFAULTS = {
  host: "127.0.0.1",
  port: 8080,
  image: "warden-sandbox:latest",
  idleTtlMs: 30 * 60_000,
  maxLifetimeMs: 8 * 3_600_000,
  jsonBodyLimitBytes: MiB,
  tarBodyLimitBytes: 256 * MiB,
  filesMaxBytes: 8 * MiB,
  maxBufferedBytes: 256 * MiB,
  tenantMaxBufferedBytes: 64 * MiB,
  httpRequestTimeoutMs: 120_000,
  maxConnections: DEFAULT_MAX_CONNECTIONS,
  maxConnectionsPerClient: DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
  tarMaxEntries: DEFAULT_TAR_MAX_ENTRIES,
  shutdownGraceMs: 10_000,
  reapIntervalMs: 5_000,
  approvalTimeoutMs: DEFAULT_APPROVAL_TIMEOUT_MS,
  warmPool: { size: 1, maxIdleMs: 10 * 60_000, maxKeys: 8 },
  spillSessionBytes: DEFAULT_SPILL_SESSION_MAX_BYTES,
  spillBytes: 1024 * MiB,
  contendedOutputBytesPerSecond: DEFAULT_CONTENDED_OUTPUT_BYTES_PER_SECOND,
  networkAuditLimit: DEFAULT_AUDIT_LIMIT,
  maxNetworkedSessions: 20,
} as const;

/**
 * Default of a tenant's `maxNetworkedSessions`: 5, a quarter of the server's default 20, so one
 * tenant never takes every networked slot. The server's 20 stays under the 30 networks a default
 * Docker engine's address pools hold (attack 37 F3), leaving room for the engine's other users.
 */
export const DEFAULT_TENANT_MAX_NETWORKED_SESSIONS = 5;

/**
 * Default of a tenant's `maxConcurrentToolCalls`: 64, the round number of calls the default pids
 * limit (256) runs at once within their budget (minPidsFor(64) = 232).
 */
export const DEFAULT_MAX_CONCURRENT_TOOL_CALLS = 64;

/**
 * Default of a tenant's `maxConcurrentWorkspaceReads`: 2. Each GET /changes holds its files (up to
 * CHANGES_MAX_TOTAL_BYTES) and its patch in the server's memory, and each export or review is engine
 * work: unbounded, one tenant's parallel requests ran the server out of memory (red team).
 */
export const DEFAULT_MAX_CONCURRENT_WORKSPACE_READS = 2;

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
  const backend = resolveBackendConfig(
    cfg.backend,
    baseDir,
    source,
    stateDir,
    cfg.tenants.map((t) => t.id),
  );
  const maxConnections = cfg.maxConnections ?? CONFIG_DEFAULTS.maxConnections;
  const config: ServerConfig = {
    host: cfg.host ?? CONFIG_DEFAULTS.host,
    port: cfg.port ?? CONFIG_DEFAULTS.port,
    stateDir,
    auditLog: resolve(baseDir, cfg.auditLog ?? resolve(stateDir, "audit.jsonl")),
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
    },
    backend,
    contendedOutputBytesPerSecond:
      cfg.contendedOutputBytesPerSecond ?? CONFIG_DEFAULTS.contendedOutputBytesPerSecond,
    networkAuditLimit: { ...(cfg.networkAuditLimit ?? CONFIG_DEFAULTS.networkAuditLimit) },
    maxNetworkedSessions: cfg.maxNetworkedSessions ?? CONFIG_DEFAULTS.maxNetworkedSessions,
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

/**
 * Reads a config file: `.json` is JSON, anything else YAML (a superset of JSON).
 * Throws InvalidArgumentError for an unreadable, unparsable or invalid file.
 */
export async function loadServerConfig(path: string): Promise<ServerConfig> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    throw new InvalidArgumentError(
      `Cannot read server config '${path}': ${(err as Error).message}. Pass --config with a readable file.`,
    );
  }
  let parsed: unknown;
  try {
    parsed = path.endsWith(".json") ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new InvalidArgumentError(`Server config '${path}' does not parse: ${(err as Error).message}`);
  }
  return resolveServerConfig(parsed, dirname(resolve(path)), path);
}

/**
 * The identity of each tenant's policy for the warm pool key, by tenant id: a digest of its layer
 * files' paths, "" for a tenant without one. The server loads each policy once at start
 * (policy-hooks.ts) and a pool lives in one server process, so the paths identify the policy its
 * sessions run under.
 */
export function tenantPolicyHashes(config: ServerConfig): Map<string, string> {
  return new Map(
    config.tenants.map((t) => [
      t.id,
      t.policy.length === 0 ? "" : createHash("sha256").update(JSON.stringify(t.policy)).digest("hex"),
    ]),
  );
}

/** Label lifetime of the server's pooled sandboxes: the longest session lifetime plus the pool's idle age. */
export function poolTtlMs(config: ServerConfig): number {
  return Math.max(...config.tenants.map((t) => t.maxLifetimeMs)) + config.warmPool.maxIdleMs;
}
