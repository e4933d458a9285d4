/**
 * `warden serve`'s start line after reconciliation (pure): what it adopted, dropped and removed.
 * What applies to the backend only: Docker removes unused workspace volumes and channel socket
 * directories ("N volume(s), N socket dir(s)"); a
 * Kubernetes sandbox has none, so the line names the namespace(s) whose Pods were reconciled instead.
 */
import type { ReconcileReport } from "./reconcile.js";

/**
 * The line for report `r`, `spillDirs` swept spill directories, and `namespaces` (the Kubernetes
 * backend's, main first; undefined on Docker).
 */
export function reconcileLine(r: ReconcileReport, spillDirs: number, namespaces?: string[]): string {
  const where = namespaces
    ? ` in namespace(s) ${namespaces.join(", ")}`
    : `, ${r.volumesRemoved.length} volume(s), ${r.socketDirsRemoved.length} socket dir(s)`;
  return `warden serve: adopted ${r.adopted.length}, dropped ${r.dropped.length}, removed ${r.orphansRemoved.length} orphan(s)${where}, ${spillDirs} spill dir(s), ${r.uploadsRemoved.length} upload(s); ${r.interrupted.length} interrupted call(s)`;
}
