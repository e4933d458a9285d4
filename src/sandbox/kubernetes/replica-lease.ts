/**
 * One live `warden serve` per replica id (docs/scale-out.md): a replica holds the Lease
 * (coordination.k8s.io/v1) `warden-replica-…` of its id in the namespace while it runs, renewed
 * every `renewMs`. Two replicas started with the same `backend.replicaId` would each reconcile the
 * other's new Pods away as orphans; the second one stops before reconciling instead, naming the
 * holder. The holder identity is the replica's host and state directory (the server's default
 * replica id): a restart on the same host and state directory, which the state lock proves is the
 * only server there, takes its own Lease over at once, even after `kill -9`.
 *
 * Liveness is judged without comparing clocks (as client-go's leader election does, by
 * observation): a Lease held by another holder is stale only when its resourceVersion did not
 * change for a whole `leaseDurationSeconds` of our own waiting; each renewal writes a new
 * `io.warden.renewed` annotation, so a live holder always changes it in time. Times in the spec
 * (MicroTime) are not used.
 */
import { createHash } from "node:crypto";
import type { CoordinationV1Api, V1Lease } from "@kubernetes/client-node";
import { WardenError } from "../../errors.js";
import { apiStatus, fromKubeError } from "./cluster.js";
import { dnsNamePart } from "./pod-labels.js";

/** Another live server holds this replica id's Lease (the CLI exits with this message). */
export class ReplicaIdInUseError extends WardenError {
  constructor(
    readonly replicaId: string,
    readonly holder: string,
    namespace: string,
  ) {
    super(
      "CONFLICT",
      `backend.replicaId '${replicaId}' is in use in namespace ${namespace} by another live warden serve (holder ${holder}); give this replica its own replicaId (each replica needs a different one).`,
    );
  }
}

/** A held Lease; `release()` stops renewing and deletes it (idempotent). */
export interface ReplicaLease {
  readonly name: string;
  release(): Promise<void>;
}

/** Options of acquireReplicaLease. */
export interface ReplicaLeaseOptions {
  leases: CoordinationV1Api;
  namespace: string;
  replicaId: string;
  /** Who holds it: the same string across restarts of this replica on its host and state directory. */
  holder: string;
  /** How long a Lease without renewal stays held, s. Default 15. */
  durationS?: number;
  /** Renewal period, ms. Default a third of the duration. */
  renewMs?: number;
  /** Diagnostics (a renewal that failed, a Lease taken over). */
  log?: (line: string) => void;
}

/**
 * The Lease name of `replicaId`: `warden-replica-`, the id lower-cased with other characters as
 * `-` (at most 40), and 8 hex digits of its SHA-256 (ids differing only in case stay apart). A
 * valid DNS subdomain name.
 */
export function replicaLeaseName(replicaId: string): string {
  const digest = createHash("sha256").update(replicaId).digest("hex").slice(0, 8);
  return `warden-replica-${dnsNamePart(replicaId)}${digest}`;
}

const RENEWED = "io.warden.renewed";

/** What a server without rights on Leases lacks (fromKubeError's fix). */
const LEASE_RIGHTS = "give the kubeconfig's user rights on leases (coordination.k8s.io) in the namespace";

/** The Lease object held by `holder`, with a fresh renewal mark (and `resourceVersion` when replacing). */
function leaseBody(name: string, holder: string, durationS: number, resourceVersion?: string): V1Lease {
  return {
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    metadata: {
      name,
      annotations: { [RENEWED]: new Date().toISOString() },
      ...(resourceVersion ? { resourceVersion } : {}),
    },
    spec: { holderIdentity: holder, leaseDurationSeconds: durationS },
  };
}

/**
 * Takes the Lease of `options.replicaId` and keeps renewing it. Resolves at once when the Lease is
 * absent, released, or held by the same `holder`; waits one lease duration when another holder
 * has it, then takes it if it was not renewed meanwhile. Rejects ReplicaIdInUseError when that
 * holder renewed it, SandboxError when the API refuses (RBAC on leases).
 */
export async function acquireReplicaLease(options: ReplicaLeaseOptions): Promise<ReplicaLease> {
  const { leases, namespace, replicaId, holder, log } = options;
  const durationS = options.durationS ?? 15;
  const name = replicaLeaseName(replicaId);
  const what = `the Lease ${namespace}/${name} of replica '${replicaId}'`;
  const api = async <T>(call: () => Promise<T>): Promise<T | "conflict" | "absent"> => {
    try {
      return await call();
    } catch (err) {
      if (apiStatus(err) === 409) return "conflict";
      if (apiStatus(err) === 404) return "absent";
      throw fromKubeError(err, `writing ${what}`, LEASE_RIGHTS);
    }
  };
  const replace = (version: string | undefined) =>
    api(() =>
      leases.replaceNamespacedLease({ name, namespace, body: leaseBody(name, holder, durationS, version) }),
    );

  for (let attempt = 0; attempt < 5; attempt++) {
    const created = await api(() =>
      leases.createNamespacedLease({ namespace, body: leaseBody(name, holder, durationS) }),
    );
    if (created !== "conflict" && created !== "absent") return held(options, name, durationS);
    const seen = await api(() => leases.readNamespacedLease({ name, namespace }));
    if (seen === "absent" || seen === "conflict") continue;
    const other = seen.spec?.holderIdentity ?? "";
    if (other !== "" && other !== holder) {
      await new Promise((r) => setTimeout(r, durationS * 1000 + 500));
      const again = await api(() => leases.readNamespacedLease({ name, namespace }));
      if (again === "absent" || again === "conflict") continue;
      if (again.metadata?.resourceVersion !== seen.metadata?.resourceVersion) {
        throw new ReplicaIdInUseError(replicaId, again.spec?.holderIdentity ?? other, namespace);
      }
      log?.(`warden serve: taking over ${what} from ${other}, not renewed for ${durationS} s`);
    }
    const taken = await replace(seen.metadata?.resourceVersion);
    if (taken !== "conflict" && taken !== "absent") return held(options, name, durationS);
  }
  throw new ReplicaIdInUseError(replicaId, "(changing while we tried)", namespace);
}

/** Renews the Lease every renewMs (unref'd) until released; a lost Lease is logged. */
function held(options: ReplicaLeaseOptions, name: string, durationS: number): ReplicaLease {
  const { leases, namespace, holder, log } = options;
  const renewMs = options.renewMs ?? Math.floor((durationS * 1000) / 3);
  let released = false;
  const renew = async () => {
    const lease = await leases.readNamespacedLease({ name, namespace });
    if (lease.spec?.holderIdentity !== holder) {
      log?.(`warden serve: the Lease ${namespace}/${name} is now held by ${lease.spec?.holderIdentity}`);
      return;
    }
    await leases.replaceNamespacedLease({
      name,
      namespace,
      body: leaseBody(name, holder, durationS, lease.metadata?.resourceVersion),
    });
  };
  const timer = setInterval(() => {
    renew().catch((err: unknown) =>
      log?.(`warden serve: renewing the Lease ${namespace}/${name} failed: ${(err as Error).message}`),
    );
  }, renewMs);
  timer.unref();
  return {
    name,
    async release() {
      if (released) return;
      released = true;
      clearInterval(timer);
      try {
        const lease = await leases.readNamespacedLease({ name, namespace });
        if (lease.spec?.holderIdentity !== holder) return;
        await leases.deleteNamespacedLease({
          name,
          namespace,
          body: { preconditions: { resourceVersion: lease.metadata?.resourceVersion ?? "" } },
        });
      } catch {
        // Gone already, or taken over: nothing of ours to release.
      }
    },
  };
}
