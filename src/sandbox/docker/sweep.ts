/**
 * The Docker backend's `sweep` (what `warden serve` removes at start beside its sandboxes): the
 * workspace volumes no container uses, the egress gateways and session networks of sessions not
 * kept, and the channel socket directories no container mounts.
 */
import type Docker from "dockerode";
import { removeEgressWhere, SESSION_LABEL } from "../../egress/index.js";
import { fromDockerError } from "../../errors.js";
import type { SweepScope } from "../backend.js";
import type { GcRemoval } from "../gc-types.js";
import { LABEL } from "../labels.js";
import { removeVolumeIfUnused } from "./docker-sandbox.js";
import { removeUnusedSocketDirs } from "./gc.js";

/**
 * Removes, in this order: the egress gateways and session networks of `scope.tenants` whose
 * session and controller `scope.keep` does not keep (after the sandboxes: a session network goes
 * only once no container is on it); the workspace volumes of `scope.tenants` owned by
 * `scope.controllerId` that no container uses (a crash between removing a container and its
 * volume leaves one); the channel socket directories no container of any tenant or controller
 * mounts once ten minutes old (removeUnusedSocketDirs: only under the current $WARDEN_CHANNEL_DIR
 * base, only this uid's, only with a unix-socket engine). Each is reported `orphaned`; a socket
 * directory with session and tenant "". Rejects SandboxError / EngineUnreachableError.
 */
export async function sweepDocker(docker: Docker, scope: SweepScope): Promise<GcRemoval[]> {
  const { tenants, keep } = scope;
  const removed: GcRemoval[] = [];
  try {
    const egress = await removeEgressWhere(docker, {
      filter: [],
      tenantLabel: LABEL.tenant,
      judge: (labels) =>
        tenants.includes(labels[LABEL.tenant] ?? "") &&
        !keep(labels[SESSION_LABEL] ?? "", labels[LABEL.controller] ?? "")
          ? "orphaned"
          : null,
    });
    removed.push(...egress);
  } catch (err) {
    throw fromDockerError(err, { what: "removing egress gateways of sessions not adopted" });
  }
  try {
    const { Volumes } = await docker.listVolumes({
      filters: { label: [LABEL.session, `${LABEL.controller}=${scope.controllerId}`] },
    });
    for (const v of Volumes ?? []) {
      const labels = v.Labels ?? {};
      const tenant = labels[LABEL.tenant] ?? "";
      if (!tenants.includes(tenant)) continue;
      if (!(await removeVolumeIfUnused(docker, v.Name))) continue;
      removed.push({
        kind: "volume",
        id: v.Name,
        sessionId: labels[LABEL.session] ?? "",
        tenant,
        reason: "orphaned",
      });
    }
  } catch (err) {
    throw fromDockerError(err, { what: "removing unused warden volumes" });
  }
  for (const dir of await removeUnusedSocketDirs(docker)) {
    removed.push({ kind: "socket-dir", id: dir, sessionId: "", tenant: "", reason: "orphaned" });
  }
  return removed;
}
