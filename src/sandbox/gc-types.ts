/** The options and results of `warden gc` on either backend (gc.ts: Docker; kubernetes/gc.ts: Pods). */

/** Options of `gc`. */
export interface GcOptions {
  /** Report what would be removed without removing it. */
  dryRun?: boolean;
  /** Only resources of this tenant (exact match). */
  tenant?: string;
  /** Clock for "expired"; default now. */
  now?: Date;
}

/** One removed (or, in a dry run, removable) resource. */
export interface GcRemoval {
  /**
   * `gateway` and `network`: a session's egress gateway and its internal network (src/egress/gc.ts);
   * `pod`: a Kubernetes sandbox Pod (kubernetes/gc.ts); `socket-dir`: a channel socket's host
   * directory no container uses (docker/channel/socket.ts; session and tenant are then "").
   */
  kind: "container" | "volume" | "gateway" | "network" | "pod" | "socket-dir";
  /** Container id, volume name, network name, Pod name or the socket directory's host path. */
  id: string;
  sessionId: string;
  tenant: string;
  reason: "expired" | "orphaned";
}
