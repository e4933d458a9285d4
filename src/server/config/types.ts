/** The resolved `warden serve` configuration (resolve.ts fills in every default). */

import type { AuditLimit } from "../../egress/index.js";
import type { ResolvedBackendConfig, WorkspaceMode } from "../../sandbox/index.js";
import type { TenantNetwork } from "./network.js";
import type { QuotaConfig } from "./schema.js";

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
  /** What the tenant's sessions may ask to reach (config/network.ts); none: no network. */
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
  /** Absolute path of the PEM ed25519 key signing the audit checkpoints; absent: a key made at start. */
  auditSigningKey?: string;
  /** Records of one audit stream between two signed checkpoints; absent: 100 (src/server/audit.ts). */
  auditCheckpointEvery?: number;
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
  warmPool: { size: number; maxIdleMs: number; maxKeys: number; networked: number };
  /** Where sessions run: Docker (also when absent) or a Kubernetes namespace (src/sandbox/backends.ts). */
  backend?: ResolvedBackendConfig;
  /**
   * Rate of the bytes one session's sandbox sends the server (command output, file reads) while
   * another session has a request in flight, bytes/s; 0: no limit (src/sandbox output-share.ts).
   */
  contendedOutputBytesPerSecond: number;
  /** Per-session bound on egress audit records (src/egress audit-limit.ts); over it, one summary line per window. */
  networkAuditLimit: AuditLimit;
  /** Live sessions with network egress at once, all tenants together (network-slots.ts). */
  maxNetworkedSessions: number;
  /** The per-tenant secret store; absent: no store (the /v1/secrets routes answer 400). */
  secrets?: SecretsConfig;
  tenants: TenantConfig[];
}

/** Where the secret store's key and file are (absolute), and how many secrets a tenant may keep. */
export interface SecretsConfig {
  /** File holding the 32-byte AES-256-GCM key, as 64 hex digits or base64. */
  keyFile: string;
  /** The encrypted store; default `<stateDir>/secrets.json`. */
  storeFile: string;
  /** Secrets one tenant may keep; default 100 (CONFIG_DEFAULTS.secretsPerTenant). */
  maxPerTenant: number;
}

/** The configured tenant `id`; undefined for a tenant not (or no longer) in the config. */
export function tenantOf(config: Pick<ServerConfig, "tenants">, id: string): TenantConfig | undefined {
  return config.tenants.find((t) => t.id === id);
}
