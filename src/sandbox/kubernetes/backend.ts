/**
 * The Kubernetes SandboxBackend: each sandbox a hardened Pod (create.ts), claimed from a warm pool
 * of spare Pods when one is configured (pool.ts over ../pool/pooled-claims.ts), taken over after a
 * restart on its still-running Pod (adopt-pod.ts: a new exec channel, whose helper kills what the
 * dead controller left running before it serves). Pods are found by the
 * `app.kubernetes.io/managed-by=warden` label and this backend's replica label
 * (`io.warden.replica`, docs/scale-out.md), and judged by their annotations (tenant, session,
 * controller), as the Docker backend judges containers: a replica lists, adopts and removes only
 * its own Pods, never another replica's, nor Pods made outside a server. A tenant of
 * `tenantNamespaces` has its Pods, sessions and spares alike, in its own namespace
 * (tenant-clusters.ts): a sandbox is created, adopted and pooled only in its tenant's namespace,
 * and `list` covers every namespace the backend uses (a Pod of a tenant found elsewhere, say after
 * the tenant's namespace changed, is listed there, so a server removes it instead of adopting it).
 */
import type {
  BackendCapabilities,
  BackendOptions,
  KubernetesBackendConfig,
  ManagedSandbox,
  SandboxBackend,
} from "../backend.js";
import type { GcRemoval } from "../gc-types.js";
import { pooledClaims } from "../pool/pooled-claims.js";
import { adoptPodSandbox } from "./adopt-pod.js";
import { loadKubernetesClient } from "./client.js";
import { connectCluster, fromKubeError, type KubernetesClusterOptions } from "./cluster.js";
import { createKubernetesSandbox } from "./create.js";
import { deletePod } from "./delete-pod.js";
import { gcPods } from "./gc.js";
import { podStateOf, replicaSelector } from "./pod-labels.js";
import { kubernetesPoolBackend } from "./pool.js";
import { acquireReplicaLease, type ReplicaLease } from "./replica-lease.js";
import {
  checkNamespaces,
  type ServerCluster,
  type TenantClusters,
  tenantClusters,
} from "./tenant-clusters.js";

/**
 * What a Pod gives (requirePodOptions refuses the rest): copy-mode workspaces, no mounts, no
 * network, the channel; runtime runsc only with a RuntimeClass (`runtimeClassName`), which then
 * runs every Pod.
 */
function capabilitiesOf(main: ServerCluster, options: BackendOptions): BackendCapabilities {
  return {
    workspaceModes: ["copy"],
    mounts: false,
    networkModes: ["none"],
    runtimes: main.runtimeClassName ? ["runc", "runsc"] : ["runc"],
    execPaths: ["channel"],
    warmPool: (options.warmPool?.size ?? 0) > 0,
  };
}

/**
 * The Kubernetes SandboxBackend of `config` (docs/kubernetes.md): loads @kubernetes/client-node
 * (PackageMissingError without it), connects (connectCluster: InvalidArgumentError for a bad
 * field or kubeconfig), checks every namespace in turn, the main one first (checkNamespaces: it
 * exists, warden's rights hold, it has the deny-all NetworkPolicy; NotFoundError or SandboxError
 * naming the namespace, the config field and the fix), then takes the replica Lease of
 * `config.replicaId` for `config.leaseHolder` in the main namespace (ReplicaIdInUseError while
 * another live holder has it). `close()` drains the warm pool, then releases the Lease.
 */
export async function openKubernetesBackend(
  config: KubernetesBackendConfig,
  options: BackendOptions,
): Promise<SandboxBackend> {
  await loadKubernetesClient();
  const { onChannelEvent, tenantNamespaces } = config;
  const main: ServerCluster = {
    ...connectCluster(connectionOf(config)),
    replicaId: config.replicaId,
    ...(onChannelEvent ? { onChannelEvent } : {}),
  };
  const clusters = tenantClusters(main, tenantNamespaces);
  await checkNamespaces(clusters, tenantNamespaces);
  const lease = await acquireReplicaLease({
    leases: main.leases,
    namespace: main.namespace,
    replicaId: config.replicaId,
    holder: config.leaseHolder,
    ...(options.log ? { log: options.log } : {}),
  });
  return kubernetesBackend(clusters, options, lease);
}

/** connectCluster's options of `config`: its fields but the tenant map, the Lease holder and the listener. */
function connectionOf(config: KubernetesBackendConfig): KubernetesClusterOptions {
  const {
    kind: _,
    tenantNamespaces: _map,
    leaseHolder: _holder,
    onChannelEvent: _on,
    ...connection
  } = config;
  return connection;
}

/**
 * The backend on the cluster views `clusters` (each with this backend's replica id), without the
 * start-up checks (openKubernetesBackend's; unit tests pass fake views): `create` is
 * createKubernetesSandbox in the tenant's namespace; `claim` takes a spare of the tenant's warm
 * pool, in its namespace, for a poolable spec (pooledClaims); `adopt` is adoptPodSandbox; `list`
 * reports this replica's Pods of `tenants` in every namespace; `remove` deletes a Pod in its
 * namespace; `gc` is gcPods over every namespace, the main one first; `sweep` finds nothing beside
 * Pods to remove. `close` drains the warm pool, then releases `lease`.
 */
export function kubernetesBackend(
  clusters: TenantClusters,
  options: BackendOptions = {},
  lease?: ReplicaLease,
): SandboxBackend {
  const { log } = options;
  const ownPods = replicaSelector(clusters.main.replicaId);
  const create: SandboxBackend["create"] = (spec, identity, call = {}) =>
    createKubernetesSandbox({ ...spec, ...identity, ...call }, clusters.of(identity.tenant ?? "local"));
  const ttl = options.warmPool ? { ttlMs: options.warmPool.ttlMs } : {};
  // Each tenant's spares in its own namespace.
  const pool = pooledClaims(
    options,
    (tenant) => kubernetesPoolBackend({ cluster: clusters.of(tenant), ...ttl }),
    create,
    // No network on the cluster (requirePodOptions): such a spec is created cold, which refuses it.
    (spec) => (spec.network?.mode ?? "none") === "none",
  );
  let closed: Promise<void> | undefined;
  return {
    kind: "kubernetes",
    capabilities: capabilitiesOf(clusters.main, options),
    scopes: clusters.all().map((c) => c.namespace),
    create,
    claim: pool.claim,
    adopt: (request) => adoptPodSandbox(clusters, request, log),

    async list(tenants) {
      const found: ManagedSandbox[] = [];
      for (const { core, namespace } of clusters.all()) {
        let items: Awaited<ReturnType<typeof core.listNamespacedPod>>["items"];
        try {
          items = (await core.listNamespacedPod({ namespace, labelSelector: ownPods })).items;
        } catch (err) {
          throw fromKubeError(err, `listing warden Pods in namespace ${namespace}`);
        }
        for (const pod of items) {
          const state = podStateOf(pod.metadata ?? {});
          if (!state || !tenants.includes(state.tenant) || !pod.metadata?.name) continue;
          found.push({
            id: pod.metadata.name,
            sessionId: state.sessionId,
            tenant: state.tenant,
            controller: state.controller,
            running: pod.status?.phase === "Running" && !pod.metadata.deletionTimestamp,
            namespace,
          });
        }
      }
      return found;
    },

    remove: (sandbox) => deletePod(clusterIn(clusters, sandbox.namespace), sandbox.id),

    async gc(gcOptions) {
      const removed: GcRemoval[] = [];
      for (const cluster of clusters.all()) removed.push(...(await gcPods(cluster, gcOptions)));
      return removed;
    },

    sweep: async () => [],
    poolStats: pool.poolStats,
    close() {
      closed ??= pool.close().finally(() => lease?.release());
      return closed;
    },
  };
}

/** The view of `namespace` (a namespace `list` reported), else the main one. */
function clusterIn(clusters: TenantClusters, namespace: string | undefined): ServerCluster {
  return clusters.all().find((c) => c.namespace === namespace) ?? clusters.main;
}
