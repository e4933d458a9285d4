/**
 * The `warden serve` configuration file's schema (TypeBox): listener, state and audit locations,
 * body limits, and the tenants with their hashed keys, quotas, lifetimes, workspaces and policy layers.
 * Keys are never stored in clear: only their SHA-256 hex digests (`warden serve hash-key` prints one).
 */

import { type Static, Type } from "typebox";
import { BackendConfigSchema } from "../../sandbox/index.js";
import { TenantNetworkSchema } from "./network.js";

const PositiveInt = (description: string, minimum = 1) => Type.Integer({ minimum, description });

/** One API key of a tenant: an id for logs, and the SHA-256 hex digest of the bearer token. */
const KeyConfigSchema = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 64, description: "Name of the key, shown in the audit log" }),
    sha256: Type.String({ pattern: "^[0-9a-f]{64}$", description: "Lower-case hex SHA-256 of the token" }),
  },
  { additionalProperties: false },
);

/** A tenant's quotas: counts and the caps any session's limits must stay within. */
const QuotaConfigSchema = Type.Object(
  {
    maxSessions: PositiveInt("Live sessions at once"),
    maxConcurrentToolCalls: Type.Optional(
      PositiveInt("Tool calls running at once across the tenant's sessions; default 64"),
    ),
    maxConcurrentWorkspaceReads: Type.Optional(
      PositiveInt(
        "GET /v1/sessions/:id/workspace and /changes requests running at once across the tenant's sessions; default 2",
      ),
    ),
    maxNetworkedSessions: Type.Optional(
      PositiveInt(
        "Live sessions with network egress at once (each takes one engine network from the Docker engine's address pools); default 5",
      ),
    ),
    cpus: Type.Number({ exclusiveMinimum: 0, description: "CPU cap per session (CPUs)" }),
    memoryBytes: PositiveInt("Memory cap per session, bytes", 6 * 1024 * 1024),
    workspaceBytes: PositiveInt("Writable workspace (disk) cap per session, bytes"),
    tmpBytes: Type.Optional(
      PositiveInt("/tmp and HOME (memory-backed, each) cap per session, bytes; default 64 MiB"),
    ),
    pids: Type.Optional(PositiveInt("Process cap per session; default 256")),
    spillSessionBytes: Type.Optional(
      PositiveInt(
        "Cap on one session's spill files (cut outputs kept on the host), bytes; default 256 MiB",
        0,
      ),
    ),
    spillBytes: Type.Optional(
      PositiveInt(
        "Cap on the spill files of all the tenant's live sessions together, bytes; default 1 GiB",
        0,
      ),
    ),
    maxBufferedBytes: Type.Optional(
      PositiveInt(
        "Request bodies and file reads of the tenant held in the server's memory at once, bytes; default 64 MiB",
      ),
    ),
  },
  { additionalProperties: false },
);

/** One tenant. `id` becomes the io.warden.tenant label of its containers. */
const TenantConfigSchema = Type.Object(
  {
    id: Type.String({ pattern: "^[a-z0-9][a-z0-9_-]{0,62}$", description: "Tenant id (label value)" }),
    keys: Type.Array(KeyConfigSchema, { minItems: 1 }),
    quotas: QuotaConfigSchema,
    idleTtlMs: Type.Optional(PositiveInt("Idle time after which a session is closed, ms")),
    maxLifetimeMs: Type.Optional(PositiveInt("Age after which a session is closed, ms")),
    policy: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: "Policy layer files" })),
    workspaceRoots: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        description: "Host dirs the tenant may use as workspaces",
      }),
    ),
    workspaceModes: Type.Optional(
      Type.Array(Type.Union([Type.Literal("copy"), Type.Literal("ro"), Type.Literal("rw")]), { minItems: 1 }),
    ),
    images: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })),
    network: Type.Optional(TenantNetworkSchema),
  },
  { additionalProperties: false },
);

/** The warm pool of pre-started sandboxes (src/sandbox/pool), per tenant, image, limits, mode and policy. */
const WarmPoolConfigSchema = Type.Object(
  {
    size: Type.Integer({
      minimum: 0,
      maximum: 16,
      description:
        "Idle sandboxes kept per pool key once a session of that key was created; 0 turns the pool off",
    }),
    maxIdleMs: Type.Optional(PositiveInt("Age after which an idle pooled sandbox is replaced, ms", 1000)),
    maxKeys: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 256,
        description:
          "Pool keys kept at once per tenant; a new one evicts the tenant's least recently used key's spares",
      }),
    ),
    networked: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 256,
        description:
          "Spares of sessions with network egress kept at once over all tenants, their gateways started (Docker): each takes one network from the engine's address pools beside maxNetworkedSessions; default 0 (none)",
      }),
    ),
  },
  { additionalProperties: false },
);

/**
 * The per-tenant secret store of `warden serve` (src/server/secrets): the key that encrypts it at
 * rest and where it lives. Without this section the /v1/secrets routes answer 400 and sessions
 * cannot be given secrets.
 */
const SecretsConfigSchema = Type.Object(
  {
    keyFile: Type.String({
      minLength: 1,
      description:
        "File holding the store's AES-256-GCM key: 32 random bytes written as 64 hex digits or 44 base64 characters (openssl rand -base64 32)",
    }),
    storeFile: Type.Optional(
      Type.String({
        minLength: 1,
        description: "The encrypted store (one JSON file, written 0600); default stateDir/secrets.json",
      }),
    ),
    maxPerTenant: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 10_000, description: "Secrets one tenant may keep; default 100" }),
    ),
  },
  { additionalProperties: false, description: "The per-tenant secret store (/v1/secrets)" },
);

/** The whole configuration file. */
export const ServerConfigSchema = Type.Object(
  {
    host: Type.Optional(Type.String({ minLength: 1 })),
    port: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
    stateDir: Type.Optional(Type.String({ minLength: 1 })),
    auditLog: Type.Optional(Type.String({ minLength: 1 })),
    auditSigningKey: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          "PEM ed25519 private key file that signs the audit log's checkpoints; default: a key made at each start (never written), its public half printed on stderr",
      }),
    ),
    auditCheckpointEvery: Type.Optional(
      PositiveInt("Records of one audit stream between two signed checkpoints; default 100"),
    ),
    defaultImage: Type.Optional(Type.String({ minLength: 1 })),
    jsonBodyLimitBytes: Type.Optional(PositiveInt("Largest JSON body, bytes")),
    tarBodyLimitBytes: Type.Optional(PositiveInt("Largest uploaded workspace tar, bytes")),
    filesMaxBytes: Type.Optional(PositiveInt("Largest file PUT or GET on /v1/sessions/:id/files, bytes")),
    maxBufferedBytes: Type.Optional(
      PositiveInt(
        "Request bodies and file reads of all tenants held in memory at once, bytes; default 256 MiB",
      ),
    ),
    httpRequestTimeoutMs: Type.Optional(
      PositiveInt("Time a client has to send a whole request (headers and body), ms; default 120000"),
    ),
    maxConnections: Type.Optional(
      PositiveInt("HTTP connections open at once, all clients together; default 4096"),
    ),
    maxConnectionsPerClient: Type.Optional(
      PositiveInt(
        "HTTP connections open at once from one remote address, an IPv6 one by its /64 (at most maxConnections); default 256, or maxConnections when lower",
      ),
    ),
    tarMaxEntries: Type.Optional(
      PositiveInt("Most entries (files, directories, links) of an uploaded workspace tar; default 100000"),
    ),
    shutdownGraceMs: Type.Optional(Type.Integer({ minimum: 0 })),
    reapIntervalMs: Type.Optional(PositiveInt("How often idle and old sessions are looked for, ms")),
    approvalTimeoutMs: Type.Optional(
      PositiveInt("How long a call that needs approval waits for an answer before it is refused, ms"),
    ),
    warmPool: Type.Optional(WarmPoolConfigSchema),
    backend: Type.Optional(BackendConfigSchema),
    contendedOutputBytesPerSecond: Type.Optional(
      Type.Integer({
        minimum: 0,
        description:
          "Rate of one session's output (bytes/s) while another session has a call running; 0: no limit; default 16 MiB/s",
      }),
    ),
    maxNetworkedSessions: Type.Optional(
      PositiveInt(
        "Live sessions with network egress at once, all tenants together: each takes one network from the Docker engine's address pools (30 on a default engine); default 20",
      ),
    ),
    networkAuditLimit: Type.Optional(
      Type.Object(
        {
          recordsPerSecond: Type.Number({
            exclusiveMinimum: 0,
            description: "Records per second once the burst is spent",
          }),
          burst: PositiveInt("Records written at once before the rate applies"),
        },
        {
          additionalProperties: false,
          description:
            "Per-session bound on egress audit lines; the records over it are counted in one `network-dropped` line per second. Default 10/s, burst 200",
        },
      ),
    ),
    secrets: Type.Optional(SecretsConfigSchema),
    tenants: Type.Array(TenantConfigSchema, { minItems: 1 }),
  },
  { additionalProperties: false },
);

export type QuotaConfig = Static<typeof QuotaConfigSchema>;
export type TenantConfigInput = Static<typeof TenantConfigSchema>;
export type ServerConfigInput = Static<typeof ServerConfigSchema>;
