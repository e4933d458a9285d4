/**
 * The owner id a server labels its sandboxes with (io.warden.controller; reconcile.ts reads it
 * back), and on Kubernetes the replica id its Pods carry as the `io.warden.replica` label
 * (docs/scale-out.md): the replica's identity, by which it reconciles, adopts and pools only
 * its own Pods.
 */
import { createHash } from "node:crypto";
import { hostname } from "node:os";

/** The prefix of every server's controller id (a CLI process is labelled by its pid instead). */
export const SERVE_PREFIX = "serve@";

/**
 * The replica id of a server that names none: its host name (characters a label value cannot
 * hold as `-`, at most 50) and the first 12 hex digits of the SHA-256 of its state directory, so
 * two servers differ unless they share both host and state directory (which the state lock
 * forbids). Stable across restarts on the same host; a container whose host name changes on
 * each start (a Deployment's Pod) gets a new id, so such replicas set `backend.replicaId`.
 * Always a valid Kubernetes label value (at most 63 characters).
 */
export function defaultReplicaId(stateDir: string, host = hostname()): string {
  const digest = createHash("sha256").update(stateDir).digest("hex").slice(0, 12);
  const name = host
    .replace(/[^A-Za-z0-9_.-]+/g, "-")
    .slice(0, 50)
    .replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, "");
  return `${name || "serve"}-${digest}`;
}

/**
 * The stable owner id a server labels its sandboxes with (io.warden.controller): `serve@` and its
 * replica id (a Kubernetes `backend`'s replicaId, else defaultReplicaId of its state directory),
 * never a pid, so that `warden gc` leaves sessions a restarted server adopts.
 */
export function serverControllerId(stateDir: string, backend?: { kind: string; replicaId?: string }): string {
  const replicaId = backend?.kind === "kubernetes" ? backend.replicaId : undefined;
  return `${SERVE_PREFIX}${replicaId ?? defaultReplicaId(stateDir)}`;
}
