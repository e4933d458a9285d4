/**
 * Sweeping egress resources (`warden gc`): gateway containers and session networks carry the
 * session's tenant, expiry and controller labels (not the sandbox's session label, so nothing that
 * lists sandboxes mistakes a gateway for one) plus `io.warden.egress` and the session id under
 * `io.warden.egress.session`. One is removed when the caller's staleness test says so (expired,
 * or its controller is dead), or when its session has no sandbox container any more and it is
 * older than ORPHAN_GRACE_MS (a gateway is started a moment before its sandbox).
 */
import type Docker from "dockerode";
import { omitUndefined } from "../util/index.js";
import { ROLE_LABEL, removeEgressResources, SESSION_LABEL } from "./gateway-container.js";
import { removeSessionCa } from "./session-ca.js";

/** How long a gateway or network may exist without its sandbox (creation in progress). */
const ORPHAN_GRACE_MS = 120_000;

/** One removed (or removable) egress resource. */
export interface EgressRemoval {
  kind: "gateway" | "network";
  /** Container id or network name. */
  id: string;
  sessionId: string;
  tenant: string;
  reason: "expired" | "orphaned";
}

/** Inputs of sweepEgress. */
export interface EgressSweepOptions {
  /** "expired" / "orphaned" / null (live) for a resource's labels: the sandbox's own test. */
  staleReason: (labels: Record<string, string>) => "expired" | "orphaned" | null;
  /** Session ids that still have a sandbox container. */
  sandboxSessions: ReadonlySet<string>;
  /** Label key of the tenant, and the tenant to restrict to. */
  tenantLabel: string;
  createdLabel: string;
  tenant?: string;
  dryRun?: boolean;
  now: Date;
}

/** Removes stale gateways, then stale or empty session networks. Engine errors reject raw. */
export async function sweepEgress(docker: Docker, options: EgressSweepOptions): Promise<EgressRemoval[]> {
  const filter: string[] = [];
  if (options.tenant !== undefined) filter.push(`${options.tenantLabel}=${options.tenant}`);
  const judge = (labels: Record<string, string>) => {
    const stale = options.staleReason(labels);
    if (stale) return stale;
    const session = labels[SESSION_LABEL] ?? "";
    const created = Date.parse(labels[options.createdLabel] ?? "");
    const old = !Number.isFinite(created) || options.now.getTime() - created > ORPHAN_GRACE_MS;
    return old && !options.sandboxSessions.has(session) ? "orphaned" : null;
  };
  return removeEgressWhere(docker, {
    filter,
    judge,
    tenantLabel: options.tenantLabel,
    ...omitUndefined({ dryRun: options.dryRun }),
  });
}

/**
 * Removes the gateways, then the session networks, labelled with every one of `filter` (label keys
 * or `key=value`) that `judge` gives a reason for; returns what was (dry run: would be) removed.
 * The judge sees a resource's labels (session id under SESSION_LABEL). Engine errors reject raw.
 */
export async function removeEgressWhere(
  docker: Docker,
  options: {
    filter: string[];
    judge: (labels: Record<string, string>) => EgressRemoval["reason"] | null;
    tenantLabel: string;
    dryRun?: boolean;
  },
): Promise<EgressRemoval[]> {
  const { filter, judge } = options;
  const removed: EgressRemoval[] = [];
  const record = (
    kind: EgressRemoval["kind"],
    id: string,
    labels: Record<string, string>,
    reason: EgressRemoval["reason"],
  ) =>
    removed.push({
      kind,
      id,
      sessionId: labels[SESSION_LABEL] ?? "",
      tenant: labels[options.tenantLabel] ?? "",
      reason,
    });
  for (const c of await docker.listContainers({ all: true, filters: { label: [ROLE_LABEL, ...filter] } })) {
    const reason = judge(c.Labels);
    if (!reason) continue;
    if (!options.dryRun) {
      await removeEgressResources(docker, c.Id, undefined);
      // The session CA certificate the gateway's sandbox mounted (session-ca.ts).
      if (c.Labels[SESSION_LABEL]) await removeSessionCa(c.Labels[SESSION_LABEL]);
    }
    record("gateway", c.Id, c.Labels, reason);
  }
  for (const n of await docker.listNetworks({ filters: { label: [ROLE_LABEL, ...filter] } })) {
    const labels = n.Labels ?? {};
    const reason = judge(labels);
    if (!reason) continue;
    if (!options.dryRun) await removeEgressResources(docker, undefined, n.Name);
    record("network", n.Name, labels, reason);
  }
  return removed;
}
