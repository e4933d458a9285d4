/** The defaults of the `warden serve` configuration, and the reasons for each bound. */

import { DEFAULT_AUDIT_LIMIT } from "../../egress/index.js";
import { DEFAULT_APPROVAL_TIMEOUT_MS } from "../../policy/index.js";
import { DEFAULT_CONTENDED_OUTPUT_BYTES_PER_SECOND } from "../../sandbox/index.js";
import { DEFAULT_SPILL_SESSION_MAX_BYTES } from "../../session/index.js";

const MiB = 1024 * 1024;

/** Default cap on the entries (files, directories, links) of an uploaded workspace tar (sessions/upload.ts). */
export const DEFAULT_TAR_MAX_ENTRIES = 100_000;

/**
 * Default of `maxConnections`: 4,096. A connection costs the server memory before its headers are
 * parsed: 4,096 admitted with unfinished headers grew a server by 18.8 MiB in an attack on
 * 2026-12-03 (an earlier one measured 72 MiB for 3,000 without caps), so the cap bounds that at
 * tens of MiB, and it stays below the open-file limits servers usually get (Node raises its soft
 * limit to the hard one, often 4,096 or more), leaving descriptors for the engine, files and logs.
 */
const DEFAULT_MAX_CONNECTIONS = 4096;

/**
 * Default of `maxConnectionsPerClient`: 256 (or maxConnections when that is lower), four times a
 * tenant's default maxConcurrentToolCalls (64), room for one client's batches, their event streams
 * and file transfers at once, while one address (an IPv6 /64: connections.ts clientOf) can take at
 * most a sixteenth of the default maxConnections. Clients behind one NAT or proxy share an address: raise it (up to
 * maxConnections) for a server that sits behind a proxy.
 */
const DEFAULT_MAX_CONNECTIONS_PER_CLIENT = 256;

/**
 * Defaults: 127.0.0.1:8080, 30 min idle TTL, 8 h lifetime, 1 MiB JSON, 256 MiB tar of at most
 * 100,000 entries, 8 MiB files, 256 MiB of bodies and file reads held at once (64 MiB per tenant),
 * 120 s to send a request, 4,096 connections open at once of which 256 from one address, 10 s grace,
 * 5 min for an approval,
 * a warm pool of 1 idle sandbox per key (filled after the key's first session) kept up to 10 min,
 * for at most 8 keys per tenant; spill files capped at 256 MiB per session and 1 GiB per tenant;
 * a session's output paced to 16 MiB/s while another session has a call running; egress audit
 * records of a session bounded to 10 per second with bursts of 200; at most 20 sessions with
 * network egress at once (5 per tenant: DEFAULT_TENANT_MAX_NETWORKED_SESSIONS); 100 secrets per
 * tenant in the secret store (each at most 8 KiB: its file is rewritten whole at each change).
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
  warmPool: { size: 1, maxIdleMs: 10 * 60_000, maxKeys: 8, networked: 0 },
  spillSessionBytes: DEFAULT_SPILL_SESSION_MAX_BYTES,
  spillBytes: 1024 * MiB,
  contendedOutputBytesPerSecond: DEFAULT_CONTENDED_OUTPUT_BYTES_PER_SECOND,
  networkAuditLimit: DEFAULT_AUDIT_LIMIT,
  maxNetworkedSessions: 20,
  secretsPerTenant: 100,
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
