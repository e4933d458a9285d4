/**
 * Start-up reconciliation with the engine, by labels (the testcontainers-node sweeper idea, keyed on
 * this server's own session records): a record whose container still runs is adopted; a record whose
 * container is gone, stopped or past its lifetime is dropped (container removed); a labelled container
 * of a configured tenant with no record is an orphan (e.g. created just before a `kill -9`) and is
 * removed, unless another live controller process on this host owns it; so is a workspace volume of
 * this server that no container uses (its container was removed just before a crash), a channel
 * socket directory no container mounts once it is ten minutes old (a younger one waits for the
 * next start or `warden gc`), and so are
 * the egress gateways and session networks of sessions not adopted (an adopted session's are kept
 * and its gateway re-attached: src/egress/adopt.ts). Then the
 * crash's other leftovers: uploaded workspaces under `<stateDir>/uploads` that no adopted session
 * uses (a tar half unpacked when the server died), and an `interrupted` audit line for each call
 * that was running (inflight-calls.ts). A record whose `env` a session may no longer set (a
 * variable refused since it was written) is dropped (`env-refused`), never adopted with it.
 * Adopting a sandbox kills what still ran in it (the backend's `adopt`), so no call of the dead
 * server keeps running unaccounted for.
 */

import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { controllerProcessAlive } from "../../sandbox/index.js";
import { validateSessionEnv } from "../../session/index.js";
import { SERVE_PREFIX, tenantOf } from "../config/index.js";
import type { SessionContext } from "./context.js";
import { addAdopted } from "./create.js";
import { sessionOptions } from "./options.js";
import { processRecordWriter } from "./process-records.js";
import type { SessionRegistry } from "./registry.js";
import { uploadsDirOf } from "./upload.js";

/** What reconciliation did, by session id. */
export interface ReconcileReport {
  adopted: string[];
  dropped: string[];
  orphansRemoved: string[];
  /** Sessions whose egress gateway and network were removed (not adopted, no other live owner). */
  egressRemoved: string[];
  /** Workspace volumes of this server that no container used any more. */
  volumesRemoved: string[];
  skipped: string[];
  /** Channel socket directories (paths) no container mounted any more (Docker). */
  socketDirsRemoved: string[];
  /** Upload directories (names under <stateDir>/uploads) no adopted session used. */
  uploadsRemoved: string[];
  /** Calls running when the server died ("<session>/<toolCallId>"), each audited `interrupted`. */
  interrupted: string[];
}

/** Another live owner of `controller`: a live controller process on this host, or another server instance. */
function ownedByAnotherController(controller: string, ownId: string): boolean {
  if (controller === ownId) return false;
  if (controller.startsWith(SERVE_PREFIX)) return true;
  return controllerProcessAlive(controller) === true;
}

/**
 * Adopts into the sessions' registry, drops and removes as described above. Never touches
 * containers of unconfigured tenants.
 */
export async function reconcile(deps: SessionContext, now = Date.now()): Promise<ReconcileReport> {
  const { sessions, records, audit } = deps;
  const { backend } = sessions;
  const report: ReconcileReport = {
    adopted: [],
    dropped: [],
    orphansRemoved: [],
    egressRemoved: [],
    volumesRemoved: [],
    socketDirsRemoved: [],
    skipped: [],
    uploadsRemoved: [],
    interrupted: [],
  };
  const tenants = deps.config.tenants.map((t) => t.id);
  const containers = await backend.list(tenants);
  const byContainer = new Map(containers.map((c) => [c.id, c]));
  const claimed = new Set<string>();
  const { records: saved } = await records.list();

  for (const record of saved) {
    const tenant = tenantOf(deps.config, record.tenant);
    const container = byContainer.get(record.containerId);
    if (container) claimed.add(container.id);
    const expired = now >= Date.parse(record.expiresAt);
    // A record written before a variable was refused (session/session-env.ts) is not adopted with it.
    const envRefused = record.env !== undefined && !envAccepted(record.env);
    let session = null;
    if (tenant && container?.running && !expired && !envRefused) {
      // A network request no longer within the tenant's bound (the config changed) drops it too.
      const secrets = { requested: record.secrets ?? [], mustExist: false };
      session = await sessionOptions(deps, tenant, record.id, record.networkAllow, secrets)
        .then((options) =>
          sessions.adopt(record, {
            ...options,
            ...(record.env ? { env: record.env } : {}),
            processes: {
              records: record.processes ?? [],
              onRecordsChanged: processRecordWriter({
                record: () => record,
                put: (r) => deps.records.put(r),
              }),
            },
          }),
        )
        .catch(() => null);
    }
    if (session && tenant) {
      addAdopted(deps, { record, session, lastActiveMs: now, running: new Set(), closing: false });
      report.adopted.push(record.id);
      audit.write({ kind: "session", event: "adopted", tenant: record.tenant, session: record.id });
      continue;
    }
    if (container) await backend.remove(container);
    if (record.uploaded && record.workspaceHostPath) {
      await rm(record.workspaceHostPath, { recursive: true, force: true });
    }
    await records.delete(record.id);
    report.dropped.push(record.id);
    const reason = !tenant
      ? "tenant-removed"
      : expired
        ? "max-lifetime"
        : envRefused
          ? "env-refused"
          : container
            ? "unusable"
            : "container-gone";
    audit.write({
      kind: "session",
      event: "record-dropped",
      tenant: record.tenant,
      session: record.id,
      reason,
    });
  }

  for (const c of containers) {
    if (claimed.has(c.id)) continue;
    if (ownedByAnotherController(c.controller, deps.controllerId)) {
      report.skipped.push(c.sessionId);
      continue;
    }
    await backend.remove(c);
    report.orphansRemoved.push(c.sessionId);
    audit.write({
      kind: "session",
      event: "orphan-removed",
      tenant: c.tenant,
      session: c.sessionId,
      containerId: c.id,
    });
  }
  // After the sandboxes: a session network is removed only once no container is on it. A sandbox
  // claimed from the warm pool and its gateway carry the spare's `pool-<uuid>`, not the record's id.
  const adopted = new Set(report.adopted);
  for (const record of saved)
    if (adopted.has(record.id)) {
      const label = byContainer.get(record.containerId)?.sessionId;
      if (label) adopted.add(label);
    }
  const swept = await backend.sweep({
    tenants,
    controllerId: deps.controllerId,
    keep: (session, controller) =>
      adopted.has(session) || ownedByAnotherController(controller, deps.controllerId),
  });
  const egress = swept.filter((r) => r.kind === "gateway" || r.kind === "network");
  report.egressRemoved = [...new Set(egress.map((r) => r.sessionId))];
  report.volumesRemoved = swept.filter((r) => r.kind === "volume").map((r) => r.id);
  report.socketDirsRemoved = swept.filter((r) => r.kind === "socket-dir").map((r) => r.id);
  report.uploadsRemoved = await removeUnusedUploads(deps.config.stateDir, deps.registry);
  const interrupted = (await deps.inflight?.recover(audit)) ?? [];
  report.interrupted = interrupted.map((c) => `${c.session}/${c.toolCallId}`);
  return report;
}

/** True when a session may set `env` (validateSessionEnv accepts it). */
function envAccepted(env: Record<string, string>): boolean {
  try {
    validateSessionEnv(env);
    return true;
  } catch {
    return false;
  }
}

/** Removes the entries of <stateDir>/uploads that are not the workspace of a live (adopted) session. */
async function removeUnusedUploads(stateDir: string, registry: SessionRegistry): Promise<string[]> {
  const dir = uploadsDirOf(stateDir);
  const used = new Set(registry.all().map((l) => l.record.workspaceHostPath));
  const names = await readdir(dir).catch(() => [] as string[]);
  const removed: string[] = [];
  for (const name of names) {
    if (used.has(join(dir, name))) continue;
    await rm(join(dir, name), { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}
