/**
 * The server's seam to sessions and the engine. `createDockerBackend` (docker-backend.ts) is the real
 * one; unit tests pass a fake. Keeping the engine behind this interface lets every HTTP behaviour be
 * tested with fastify's inject and no Docker.
 */
import type { Session, SessionOptions } from "../../session/index.js";
import type { SessionRecord } from "./record-store.js";

/** A labelled warden container as the engine reports it. */
export interface ManagedContainer {
  containerId: string;
  sessionId: string;
  tenant: string;
  /** `io.warden.controller` label: `hostname:pid` of the process that created it. */
  controller: string;
  running: boolean;
  /** Kubernetes: the Pod's namespace (a server may use several, one per tenant); absent on Docker. */
  namespace?: string;
}

/** Creates, re-opens, lists and removes sessions. */
export interface SessionBackend {
  /** Creates a session (and its container). Rejects with WardenError subclasses. */
  create(options: SessionOptions): Promise<Session>;
  /**
   * Re-opens the session of `record` on its existing container after a restart, with fresh hooks
   * from `options`: what the dead server's calls still ran in it is killed and, for a helper
   * container, the exec channel re-attached (src/sandbox/docker/adopt.ts). Resolves null when the
   * container cannot be used (gone or stopped).
   */
  adopt(record: SessionRecord, options: SessionOptions): Promise<Session | null>;
  /** Containers labelled with one of `tenants`. */
  listContainers(tenants: readonly string[]): Promise<ManagedContainer[]>;
  /** Removes a container (as listContainers reported it) and its volumes; no error when it is already gone. */
  removeContainer(container: ManagedContainer): Promise<void>;
  /**
   * Removes the workspace volumes labelled with one of `tenants` and owned by `controllerId` that no
   * container uses (a crash between removing a container and its volume leaves one); returns their
   * names.
   */
  removeUnusedVolumes?(tenants: readonly string[], controllerId: string): Promise<string[]>;
  /**
   * Removes the egress gateways and session networks labelled with one of `tenants` whose session
   * and controller `keep` does not keep; returns the session ids whose resources it removed.
   */
  removeEgressExcept?(
    tenants: readonly string[],
    keep: (sessionId: string, controller: string) => boolean,
  ): Promise<string[]>;
  /**
   * Removes the channel socket directories that no container of any tenant or controller mounts
   * and that are older than ten minutes (Docker only: a crash between making one and removing its
   * container leaves it); returns their paths. Only under the current $WARDEN_CHANNEL_DIR base,
   * only this uid's, and only when the engine is reached through a unix socket (sweepSocketDirs).
   */
  removeUnusedSocketDirs?(): Promise<string[]>;
  /** Releases what the backend holds besides sessions (the warm pool's idle sandboxes). Idempotent. */
  close?(): Promise<void>;
  /** Idle sandboxes the warm pool holds ready now (0 without a pool). */
  idleSpares?(): number;
  /** Warm pool keys backing off because their spares found no room on the cluster (0 without). */
  poolBackoffKeys?(): number;
}
