/**
 * The server's sessions on a SandboxBackend: a new session's sandbox is the backend's `claim` (a
 * warm-pool spare when the backend has one and the spec can be pooled, else a cold start); a
 * session re-opened after a restart is the backend's `adopt` of its record's sandbox. Both get the
 * server's spill directory and the tenant's spill caps. Unit tests pass a fake SessionFactory.
 */
import type { AdoptRequest, SandboxBackend } from "../../sandbox/index.js";
import type { Session, SessionOptions } from "../../session/index.js";
import { adoptSpillStore, createSpillStore, openSession } from "../../session/index.js";
import { builtinTools, optInTools } from "../../tools/index.js";
import type { SpillSessionOptions } from "../tenancy/spill-quota.js";
import type { SessionRecord } from "./record-store.js";

/** Opens and re-opens the server's sessions. Methods reject with WardenError subclasses. */
export interface SessionFactory {
  /** Where the sessions' sandboxes come from; reconcile lists, removes and sweeps through it. */
  readonly backend: SandboxBackend;
  /** A new session (and its sandbox). */
  create(options: SessionOptions): Promise<Session>;
  /**
   * The session of `record` re-opened on its existing sandbox after a restart, with fresh hooks
   * from `options`: what the dead server's calls still ran in it is killed and its channel
   * re-attached (the backend's adopt). Resolves null when the sandbox cannot be used.
   */
  adopt(record: SessionRecord, options: SessionOptions): Promise<Session | null>;
}

/** What sessionFactory adds to each session's options. */
export interface SessionFactoryOptions {
  /** Where sessions' spill files go (default: a private temp directory per session). */
  spillDir?: string;
  /** Spill caps of a session of `tenant` (`warden serve`: tenantSpillOptions). Default: the session defaults. */
  spillOptions?: (tenant: string) => SpillSessionOptions;
  /** Identity of a tenant's policy (part of the warm pool's key: ClaimOptions.policyHash). Default: none. */
  policyHash?: (tenant: string) => string;
}

/** Sessions whose sandboxes `backend` claims and adopts (see the file comment). */
export function sessionFactory(backend: SandboxBackend, options: SessionFactoryOptions = {}): SessionFactory {
  const withSpill = (opts: SessionOptions): SessionOptions => ({
    ...(options.spillDir ? { spillDir: options.spillDir } : {}),
    ...options.spillOptions?.(opts.tenant ?? "local"),
    ...opts,
  });
  return {
    backend,
    create(opts) {
      const policyHash = options.policyHash?.(opts.tenant ?? "local") ?? "";
      return openSession(withSpill(opts), {
        createSandbox: async (spec, identity, call) =>
          (await backend.claim(spec, identity, { ...call, policyHash })).sandbox,
        createSpillStore,
        builtinTools,
        optInTools,
      });
    },

    async adopt(record, opts) {
      const request: AdoptRequest = {
        id: record.containerId,
        sessionId: record.id,
        tenant: record.tenant,
        image: record.image,
        workspaceMode: record.workspaceMode,
        ...(record.workspaceHostPath ? { workspaceHostPath: record.workspaceHostPath } : {}),
        createdAt: new Date(record.createdAt),
        expiresAt: new Date(record.expiresAt),
        ...(opts.sandbox?.network ? { network: opts.sandbox.network } : {}),
      };
      const sandbox = await backend.adopt(request);
      if (!sandbox) return null;
      return openSession(withSpill({ ...opts, sessionId: record.id }), {
        createSandbox: async () => sandbox,
        // Its spill files stay readable until it closes (session/spill-adopt.ts).
        createSpillStore: adoptSpillStore,
        builtinTools,
        optInTools,
      });
    },
  };
}
