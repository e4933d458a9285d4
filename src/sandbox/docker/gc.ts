/**
 * `warden gc`: removes warden containers (and their workspace volumes) that are expired or whose
 * controller process is dead on this host, then warden volumes left without a container for the
 * same reasons. A controller crash therefore leaves nothing gc cannot find (every resource is
 * labelled before it exists). Modelled on testcontainers-node's Ryuk sweeper, without a daemon.
 */
import type Docker from "dockerode";
import { sweepEgress } from "../../egress/index.js";
import { fromDockerError } from "../../errors.js";
import type { GcOptions, GcRemoval } from "../gc-types.js";
import { LABEL, staleReason } from "../labels.js";
import { isLocalEngine, sweepSocketDirs } from "./channel/index.js";
import { removeSandboxResources, removeVolumeIfUnused } from "./docker-sandbox.js";
import { getDocker } from "./engine.js";

export type { GcOptions, GcRemoval };

/** Sweeps stale warden resources. Rejects EngineUnreachableError / SandboxError on engine failure. */
export async function gc(options: GcOptions = {}, docker: Docker = getDocker()): Promise<GcRemoval[]> {
  const now = options.now ?? new Date();
  const filter: string[] = [LABEL.session];
  if (options.tenant !== undefined) filter.push(`${LABEL.tenant}=${options.tenant}`);
  const removed: GcRemoval[] = [];
  try {
    const containers = await docker.listContainers({ all: true, filters: { label: filter } });
    for (const c of containers) {
      const reason = staleReason(c.Labels, now);
      if (!reason) continue;
      const volume = c.Labels[LABEL.volume];
      if (!options.dryRun) await removeSandboxResources(docker, c.Id, volume);
      removed.push(removal("container", c.Id, c.Labels, reason));
      if (volume) removed.push(removal("volume", volume, c.Labels, reason));
    }
    const { Volumes } = await docker.listVolumes({ filters: { label: filter } });
    for (const v of Volumes ?? []) {
      if (removed.some((r) => r.kind === "volume" && r.id === v.Name)) continue;
      const reason = staleReason(v.Labels ?? undefined, now);
      if (!reason) continue;
      // Not while a live container still uses it.
      if (!options.dryRun && !(await removeVolumeIfUnused(docker, v.Name))) continue;
      removed.push(removal("volume", v.Name, v.Labels ?? {}, reason));
    }
    const kept = containers.filter((c) => !removed.some((r) => r.id === c.Id));
    const live = new Set(kept.map((c) => c.Labels[LABEL.session] ?? ""));
    removed.push(
      ...(await sweepEgress(docker, {
        staleReason: (labels) => staleReason(labels, now),
        sandboxSessions: live,
        tenantLabel: LABEL.tenant,
        createdLabel: LABEL.created,
        ...(options.tenant !== undefined ? { tenant: options.tenant } : {}),
        ...(options.dryRun ? { dryRun: true } : {}),
        now,
      })),
    );
    if (options.tenant === undefined) {
      // Socket directories carry no tenant: only a sweep of every tenant removes them.
      const dirs = await sweepSocketDirsOf(docker, kept, {
        now,
        ...(options.dryRun ? { dryRun: true } : {}),
      });
      for (const dir of dirs) removed.push(removal("socket-dir", dir, {}, "orphaned"));
    }
  } catch (err) {
    throw fromDockerError(err, { what: "collecting stale sandboxes" });
  }
  return removed;
}

/**
 * Removes the channel socket directories (sandbox/docker/channel/socket-dir.ts) that none of
 * `containers` mounts and that are old enough (sweepSocketDirs); returns their paths. Only when the
 * engine is reached through a unix socket (isLocalEngine; a tcp or ssh engine's mount sources are
 * not our paths). `containers` must be every warden container the engine has, of every tenant and
 * controller; two engines on one host must not share a base (each sees only its own mounts).
 */
async function sweepSocketDirsOf(
  docker: Docker,
  containers: readonly Docker.ContainerInfo[],
  options: { now: Date; dryRun?: boolean },
): Promise<string[]> {
  if (!isLocalEngine(docker)) return [];
  const inUse = new Set(containers.flatMap((c) => (c.Mounts ?? []).map((m) => m.Source)));
  return sweepSocketDirs(inUse, options);
}

/**
 * What `warden serve` sweeps at start: the socket directories no warden container mounts (a
 * controller killed between making one and removing its container leaves it). Returns their paths;
 * rejects SandboxError / EngineUnreachableError when the engine cannot list its containers.
 */
export async function removeUnusedSocketDirs(docker: Docker, now = new Date()): Promise<string[]> {
  if (!isLocalEngine(docker)) return []; // nothing to sweep: no need to list the containers
  try {
    const containers = await docker.listContainers({ all: true, filters: { label: [LABEL.session] } });
    return await sweepSocketDirsOf(docker, containers, { now });
  } catch (err) {
    throw fromDockerError(err, { what: "sweeping unused channel socket directories" });
  }
}

function removal(
  kind: GcRemoval["kind"],
  id: string,
  labels: Record<string, string>,
  reason: GcRemoval["reason"],
): GcRemoval {
  return { kind, id, sessionId: labels[LABEL.session] ?? "", tenant: labels[LABEL.tenant] ?? "", reason };
}
