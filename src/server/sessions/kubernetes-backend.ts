/**
 * The SessionBackend on Kubernetes: each session's sandbox is a hardened Pod
 * (src/sandbox/kubernetes), claimed from a warm pool of spare Pods when one is configured
 * (src/pool's kubernetesPoolBackend). After a restart a session is re-opened on its still-running
 * Pod (`adopt`: a new exec channel, whose helper kills what the dead server left running before it
 * serves). Pods are found by the `app.kubernetes.io/managed-by=warden` label and this
 * server's replica label (`io.warden.replica`, docs/scale-out.md), and judged by their annotations
 * (tenant, session, controller), as the Docker backend judges containers: a replica lists, adopts
 * and removes only its own Pods, never another replica's, nor Pods made outside a server.
 * A tenant of `backend.tenantNamespaces` has its Pods, sessions and spares alike, in its own
 * namespace (kubernetes-namespaces.ts): a session is created, adopted and pooled only in its
 * tenant's namespace, and reconcile lists every namespace the server uses (a Pod of a tenant
 * found elsewhere, say after the tenant's namespace changed, is not adopted: it is removed).
 */
import { type PoolRequest, type TenantPools, tenantPools } from "../../sandbox/index.js";
import type { PreparedPod, ServerCluster, TenantClusters } from "../../sandbox/kubernetes/index.js";
import {
  adoptPod,
  createKubernetesSandbox,
  deletePod,
  fromKubeError,
  KubernetesSandbox,
  kubernetesPoolBackend,
  podSandboxInfo,
  podStateOf,
  podUidOf,
  replicaSelector,
} from "../../sandbox/kubernetes/index.js";
import type { Session, SessionOptions } from "../../session/index.js";
import { adoptSpillStore, openSession } from "../../session/index.js";
import { builtinTools } from "../../tools/index.js";
import type { ManagedContainer, SessionBackend } from "./backend.js";
import { baselineOf, pooledSessions, type SessionBackendOptions } from "./pooled-sessions.js";
import type { SessionRecord } from "./record-store.js";

/**
 * Options of the Kubernetes SessionBackend: the cluster views of its namespaces (each with this
 * server's replica id), and the sessions' options.
 */
export interface KubernetesBackendOptions extends SessionBackendOptions {
  clusters: TenantClusters;
}

/** Sessions on Pods of `options.clusters` (see the file comment). `close()` drains the warm pool. */
export function createKubernetesBackend(options: KubernetesBackendOptions): SessionBackend {
  const { clusters, log } = options;
  const ownPods = replicaSelector(clusters.main.replicaId);
  const pools = poolsOf(options);
  const sessions = pooledSessions(options, pools, (opts) =>
    createKubernetesSandbox(opts, clusters.of(opts.tenant ?? "local")),
  );
  const { withSpill } = sessions;
  return {
    create: sessions.create,
    close: sessions.close,
    idleSpares: sessions.idleSpares,
    poolBackoffKeys: sessions.poolBackoffKeys,

    async adopt(record: SessionRecord, sessionOptions: SessionOptions): Promise<Session | null> {
      const name = record.containerId;
      // Only in the record's tenant's namespace: a session never reaches another tenant's Pods.
      const cluster = clusters.of(record.tenant);
      let state: ReturnType<typeof podStateOf>;
      let uid: number;
      try {
        const pod = await cluster.core.readNamespacedPod({ name, namespace: cluster.namespace });
        state = pod.status?.phase === "Running" ? podStateOf(pod.metadata ?? {}) : null;
        uid = podUidOf(pod);
      } catch {
        return null;
      }
      // A Pod claimed from the warm pool keeps the `pool-<uuid>` session it was created with.
      const sessionOk = state && (state.sessionId === record.id || state.poolKey !== undefined);
      // Another replica's Pod is never taken over, even when a record names it (a copied stateDir).
      const ownPod = state?.replica === clusters.main.replicaId;
      if (!state || !ownPod || !sessionOk || state.tenant !== record.tenant) return null;
      let channel: Awaited<ReturnType<typeof adoptPod>>;
      try {
        channel = await adoptPod(cluster, name, log ? { log } : {});
      } catch (err) {
        log?.(`session ${record.id}: Pod ${name} cannot be adopted (${(err as Error).message})`);
        return null;
      }
      const info = podSandboxInfo(
        {
          name,
          sessionId: record.id,
          tenant: record.tenant,
          image: record.image,
          createdAt: state.createdAt,
          expiresAt: state.expiresAt,
          uid,
        },
        cluster,
      );
      const baseline = await baselineOf(record.workspaceHostPath);
      const sandbox = new KubernetesSandbox(info, cluster, channel, baseline, log);
      return openSession(withSpill({ ...sessionOptions, sessionId: record.id }), {
        createSandbox: async () => sandbox,
        // Its spill files stay readable until it closes (session/spill-adopt.ts).
        createSpillStore: adoptSpillStore,
        builtinTools,
      });
    },

    async listContainers(tenants: readonly string[]): Promise<ManagedContainer[]> {
      const found: ManagedContainer[] = [];
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
            containerId: pod.metadata.name,
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

    removeContainer: (pod: ManagedContainer) =>
      deletePod(clusterIn(clusters, pod.namespace), pod.containerId),
  };
}

/** The view of `namespace` (a namespace listContainers reported), else the main one. */
function clusterIn(clusters: TenantClusters, namespace: string | undefined): ServerCluster {
  return clusters.all().find((c) => c.namespace === namespace) ?? clusters.main;
}

/** One warm pool of spare Pods per tenant; undefined when the pool is off. */
function poolsOf(options: KubernetesBackendOptions): TenantPools<PoolRequest, PreparedPod> | undefined {
  const config = options.warmPool;
  if (!config || config.size === 0) return undefined;
  return tenantPools({
    // Each tenant's spares in its own namespace.
    backend: (tenant) => kubernetesPoolBackend({ cluster: options.clusters.of(tenant), ttlMs: config.ttlMs }),
    size: config.size,
    maxIdleMs: config.maxIdleMs,
    ...(config.maxKeys ? { maxKeys: config.maxKeys } : {}),
    ...(options.log ? { log: options.log } : {}),
  });
}
