/**
 * The warm pool's Kubernetes backend: entries are sandbox Pods prepared by preparePod (hardened,
 * running, warden-helper connected and pinged by the channel heartbeat while they wait, so no
 * streaming idle timeout closes a spare's stream; empty workspace), labelled with the request's tenant, a
 * `pool-<uuid>` session id and `io.warden.pool=<key digest>` (the whole key as annotation), so
 * `warden gc` and the server's reconcile find them. A claim copies the claimer's workspace in
 * (finishPodSandbox); the returned sandbox reports the claimer's session id while the Pod keeps
 * its `pool-<uuid>` label, as a pooled Docker container does. A spare no node takes is deleted as
 * soon as the scheduler says so (PodUnschedulableError, `noRoom`), and the pool backs off.
 */

import { type PoolRequest, poolRequestKeys, SPARE_TTL_MS } from "../pool/pool-request.js";
import type { PoolBackend } from "../pool/warm-pool.js";
import { type KubernetesCluster, ResourceQuotaExceededError } from "./cluster.js";
import { createKubernetesSandbox, finishPodSandbox, type PreparedPod, preparePod } from "./create.js";
import { deletePod } from "./delete-pod.js";
import { PodUnschedulableError } from "./start-pod.js";

/** Options of the Kubernetes pool backend. */
export interface KubernetesPoolOptions {
  cluster: KubernetesCluster;
  /** Tenant of requests that name none. Default "local". */
  tenant?: string;
  /** Lifetime of spare Pods, ms (their expiry annotation). Default 25 h, as the Docker pool's. */
  ttlMs?: number;
}

/** A PoolBackend on Kubernetes. See the file comment for labels and hand-over. */
export function kubernetesPoolBackend(options: KubernetesPoolOptions): PoolBackend<PoolRequest, PreparedPod> {
  const { cluster } = options;
  const { claimerOptions, keyOf, spareOf, claimOf } = poolRequestKeys(options.tenant ?? "local");
  const ttlMs = options.ttlMs ?? SPARE_TTL_MS;
  return {
    keyOf,
    async prepare(request, signal) {
      const { key, opts } = await spareOf(request, ttlMs);
      // A spare never waits for room: session Pods need it first (the pool backs off instead).
      return preparePod(cluster, opts, { signal, poolKey: key, failUnscheduled: true });
    },
    async handOver(prepared, request) {
      const opts = await claimOf(request, prepared.expiresAt);
      return finishPodSandbox(cluster, prepared, opts, request.claim?.signal);
    },
    createCold: (request) => createKubernetesSandbox(claimerOptions(request), cluster),
    alive: (prepared) => !prepared.channel.closed,
    async discard(prepared) {
      prepared.channel.close();
      await deletePod(cluster, prepared.name);
    },
    noRoom: (err) =>
      err instanceof PodUnschedulableError
        ? err.scheduler
        : err instanceof ResourceQuotaExceededError
          ? err.quota
          : undefined,
  };
}
