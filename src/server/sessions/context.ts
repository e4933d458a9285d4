/**
 * What the session operations share (create.ts, tool-calls.ts, close.ts, options.ts): the server's
 * dependencies and the state of its sessions (the registry, the tenants' quotas and networked
 * slots, the host workspaces being used). Each operation takes the part of it that it needs; the
 * routes' ServerContext is this plus the server's draining flag.
 */
import type { ServerAuditLog } from "../audit.js";
import { type ServerConfig, serverControllerId } from "../config/index.js";
import type { ServerMetrics } from "../metrics.js";
import type { SecretStore } from "../secrets/index.js";
import { NetworkSlots, TenantQuotas } from "../tenancy/index.js";
import type { ApprovalBroker } from "./approval-broker.js";
import { HostWorkspaceGuard } from "./host-workspace-guard.js";
import type { InflightCalls } from "./inflight-calls.js";
import type { HookFactory } from "./policy-hooks.js";
import type { RecordStore } from "./record-store.js";
import { SessionRegistry } from "./registry.js";
import { RunningCalls } from "./running-calls.js";
import type { SessionFactory } from "./session-factory.js";

/** The server's dependencies that sessions work with. `now` is epoch ms (injectable for tests). */
export interface SessionDeps {
  config: ServerConfig;
  /** Sessions over the server's SandboxBackend (session-factory.ts; its `backend`). */
  sessions: SessionFactory;
  records: RecordStore;
  audit: ServerAuditLog;
  metrics: ServerMetrics;
  approvals: ApprovalBroker;
  /** Journal of running batches, for the `interrupted` audit lines after a crash. */
  inflight?: InflightCalls;
  hooks?: HookFactory;
  /** The per-tenant secret store, when the config has `secrets` (else the secrets routes answer 400). */
  secrets?: SecretStore;
  now?: () => number;
  /** The sessions' running calls (shared with the approval broker); default: a new tracker. */
  calls?: RunningCalls;
}

/** The dependencies plus the state of the server's sessions, made once per server (sessionContext). */
export interface SessionContext extends SessionDeps {
  now: () => number;
  /** Owner id on this server's sandboxes (see serverControllerId). */
  controllerId: string;
  /** The live sessions of every tenant, and the maxSessions reservations. */
  registry: SessionRegistry;
  /** Every tenant's tool-call and workspace-read slots. */
  quotas: TenantQuotas;
  /** Sessions with network egress, per tenant and server-wide. */
  networkSlots: NetworkSlots;
  /** Creations on overlapping host directories, one at a time (host-workspace-guard.ts). */
  hostWorkspaces: HostWorkspaceGuard;
  /** rw host workspaces of sessions being created or closed, by session id (create.ts liveRwWorkspaces). */
  pendingRw: Map<string, string>;
  /** Each session's running calls, which audit records link to (running-calls.ts). */
  calls: RunningCalls;
}

/** The session state of a new server over `deps` (no session yet). */
export function sessionContext(deps: SessionDeps): SessionContext {
  return {
    ...deps,
    now: deps.now ?? Date.now,
    controllerId: serverControllerId(deps.config.stateDir, deps.config.backend),
    registry: new SessionRegistry(),
    quotas: new TenantQuotas(deps.metrics),
    networkSlots: new NetworkSlots(deps.config.maxNetworkedSessions, deps.metrics),
    hostWorkspaces: new HostWorkspaceGuard(),
    pendingRw: new Map(),
    calls: deps.calls ?? new RunningCalls(),
  };
}
