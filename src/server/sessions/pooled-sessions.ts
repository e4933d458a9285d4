/**
 * What both session backends (Docker, Kubernetes) share: a new session's sandbox claimed from the
 * tenant's warm pool when it can be pooled (a copy-mode workspace, no network egress), else created
 * cold by the backend; the server's spill options; and the baseline of a workspace re-opened after
 * a restart.
 */
import type {
  CopyWorkspace,
  PoolRequest,
  Sandbox,
  SandboxOptions,
  TenantPools,
  WorkspaceHashes,
} from "../../sandbox/index.js";
import { packDirectory } from "../../sandbox/index.js";
import type { Session, SessionOptions } from "../../session/index.js";
import { createSpillStore, openSession } from "../../session/index.js";
import { builtinTools } from "../../tools/index.js";
import { omitUndefined } from "../../util/index.js";
import type { SpillSessionOptions } from "../tenancy/spill-quota.js";

/** Options of a SessionBackend (Docker or Kubernetes) besides where its sandboxes run. */
export interface SessionBackendOptions {
  /** Where sessions' spill files go (default: a private temp directory per session). */
  spillDir?: string;
  /** Spill caps of a session of `tenant` (`warden serve`: tenantSpillOptions). Default: the session defaults. */
  spillOptions?: (tenant: string) => SpillSessionOptions;
  /**
   * Keep `size` idle sandboxes per pool key (tenant, image, limits, mode, policy) once a session
   * of that key was created, for at most `maxKeys` keys per tenant (its least recently used key
   * is evicted; default 8), so one tenant cannot evict another's spares. `ttlMs` is the pooled
   * containers' label lifetime: at least the longest session lifetime plus `maxIdleMs`, or claims
   * fall back to a cold start.
   */
  warmPool?: { size: number; maxIdleMs: number; maxKeys?: number; ttlMs: number };
  /** Identity of a tenant's policy (part of the pool key). Default: none. */
  policyHash?: (tenant: string) => string;
  /** Diagnostics of the pool (refill failures). */
  log?: (line: string) => void;
  /** Called for each new session's sandbox: from the pool, or created cold. */
  onSandboxStart?: (source: "pool" | "cold") => void;
}

/** True for no workspace or a copy-mode one: the only kinds a pooled sandbox takes. */
function isCopyWorkspace(workspace: SandboxOptions["workspace"]): workspace is CopyWorkspace | undefined {
  return (workspace?.mode ?? "copy") === "copy";
}

/** The baseline hashes of a workspace host directory (what changedPaths compares with). */
export async function baselineOf(hostPath: string | undefined): Promise<WorkspaceHashes> {
  if (!hostPath) return new Map();
  const packed = packDirectory(hostPath);
  packed.stream.resume();
  try {
    await packed.done;
  } catch {
    return new Map();
  }
  return packed.hashes;
}

/** The session part of a backend: create (pool or cold), drain the pools, count spares, spill options. */
export interface PooledSessions {
  create(options: SessionOptions): Promise<Session>;
  close(): Promise<void>;
  idleSpares(): number;
  /** Pool keys backing off because their spares found no room (TenantPools.backingOff). */
  poolBackoffKeys(): number;
  /** `opts` with the server's spill directory and the tenant's spill caps. */
  withSpill(opts: SessionOptions): SessionOptions;
}

/** Sessions whose sandboxes come from `pools` (when on) or `createCold`. */
export function pooledSessions<P>(
  options: SessionBackendOptions,
  pools: TenantPools<PoolRequest, P> | undefined,
  createCold: (opts: SandboxOptions) => Promise<Sandbox>,
): PooledSessions {
  const withSpill = (opts: SessionOptions): SessionOptions => ({
    ...(options.spillDir ? { spillDir: options.spillDir } : {}),
    ...options.spillOptions?.(opts.tenant ?? "local"),
    ...opts,
  });
  const sandboxFor = async (opts: SandboxOptions): Promise<Sandbox> => {
    const tenant = opts.tenant ?? "local";
    // The key's template and the claim's own fields, each passed to the pool as its own part.
    const { sessionId, signal, workspace, ...template } = opts;
    // ro/rw spares would bind-mount a host path long after it was checked: those start cold.
    // A gateway reports to its own session's audit: sessions with network egress start cold.
    const offline = (opts.network?.mode ?? "none") === "none";
    const copyMode = isCopyWorkspace(workspace);
    const pool = copyMode && offline ? pools?.of(tenant) : undefined;
    if (!pool || !copyMode) {
      const sandbox = await createCold(opts);
      options.onSandboxStart?.("cold");
      return sandbox;
    }
    const policyHash = options.policyHash?.(tenant) ?? "";
    const claim = await pool.claim({
      template,
      claim: omitUndefined({ sessionId, signal, workspace }),
      policyHash,
    });
    options.onSandboxStart?.(claim.pooled ? "pool" : "cold");
    return claim.sandbox;
  };
  return {
    create: (opts) =>
      openSession(withSpill(opts), { createSandbox: sandboxFor, createSpillStore, builtinTools }),
    close: async () => pools?.drain(),
    idleSpares: () => pools?.idle() ?? 0,
    poolBackoffKeys: () => pools?.backingOff() ?? 0,
    withSpill,
  };
}
