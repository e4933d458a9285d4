/**
 * The SessionBackend on Kubernetes: each session's sandbox is a hardened Pod
 * (src/sandbox/kubernetes), claimed from a warm pool of spare Pods when one is configured
 * (src/pool's kubernetesPoolBackend). After a restart a session is re-opened on its still-running
 * Pod (`adopt`: a new exec channel, whose helper kills what the dead server left running before it
 * serves). Pods are found by the `app.kubernetes.io/managed-by=warden` label and this
 * server's replica label (`io.warden.replica`, README "Scale-out"), and judged by their annotations
 * (tenant, session, controller), as the Docker backend judges containers: a replica lists, adopts
 * and removes only its own Pods, never another replica's, nor Pods made outside a server.
 */
import { kubernetesPoolBackend, type PoolRequest, type TenantPools, tenantPools } from "../pool/index.js";
import type { PreparedPod } from "../sandbox/index.js";
import {
  adoptPod,
  createKubernetesSandbox,
  deletePod,
  fromKubeError,
  type KubernetesCluster,
  KubernetesSandbox,
  podSandboxInfo,
  podStateOf,
  replicaSelector,
} from "../sandbox/index.js";
import type { Session, SessionOptions } from "../session/index.js";
import { createSpillStore, openSession } from "../session/index.js";
import { builtinTools } from "../tools/index.js";
import type { ManagedContainer, SessionBackend } from "./backend.js";
import { baselineOf, pooledSessions, type SessionBackendOptions } from "./pooled-sessions.js";
import type { SessionRecord } from "./record-store.js";

/** Options of the Kubernetes SessionBackend: the cluster (with this server's replica id), and the sessions' options. */
export interface KubernetesBackendOptions extends SessionBackendOptions {
  cluster: KubernetesCluster & { replicaId: string };
}

/** Sessions on Pods of `options.cluster` (see the file comment). `close()` drains the warm pool. */
export function createKubernetesBackend(options: KubernetesBackendOptions): SessionBackend {
  const { cluster, log } = options;
  const ownPods = replicaSelector(cluster.replicaId);
  const pools = poolsOf(options);
  const sessions = pooledSessions(options, pools, (opts) => createKubernetesSandbox(opts, cluster));
  const { withSpill } = sessions;
  return {
    create: sessions.create,
    close: sessions.close,
    idleSpares: sessions.idleSpares,

    async adopt(record: SessionRecord, sessionOptions: SessionOptions): Promise<Session | null> {
      const name = record.containerId;
      let state: ReturnType<typeof podStateOf>;
      try {
        const pod = await cluster.core.readNamespacedPod({ name, namespace: cluster.namespace });
        state = pod.status?.phase === "Running" ? podStateOf(pod.metadata ?? {}) : null;
      } catch {
        return null;
      }
      // A Pod claimed from the warm pool keeps the `pool-<uuid>` session it was created with.
      const sessionOk = state && (state.sessionId === record.id || state.poolKey !== undefined);
      // Another replica's Pod is never taken over, even when a record names it (a copied stateDir).
      const ownPod = state?.replica === cluster.replicaId;
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
        },
        cluster,
      );
      const baseline = await baselineOf(record.workspaceHostPath);
      const sandbox = new KubernetesSandbox(info, cluster, channel, baseline);
      return openSession(withSpill({ ...sessionOptions, sessionId: record.id }), {
        createSandbox: async () => sandbox,
        createSpillStore,
        builtinTools,
      });
    },

    async listContainers(tenants: readonly string[]): Promise<ManagedContainer[]> {
      try {
        const list = await cluster.core.listNamespacedPod({
          namespace: cluster.namespace,
          labelSelector: ownPods,
        });
        const found: ManagedContainer[] = [];
        for (const pod of list.items) {
          const state = podStateOf(pod.metadata ?? {});
          if (!state || !tenants.includes(state.tenant) || !pod.metadata?.name) continue;
          found.push({
            containerId: pod.metadata.name,
            sessionId: state.sessionId,
            tenant: state.tenant,
            controller: state.controller,
            running: pod.status?.phase === "Running" && !pod.metadata.deletionTimestamp,
          });
        }
        return found;
      } catch (err) {
        throw fromKubeError(err, `listing warden Pods in namespace ${cluster.namespace}`);
      }
    },

    removeContainer: (name: string) => deletePod(cluster, name),
  };
}

/** One warm pool of spare Pods per tenant; undefined when the pool is off. */
function poolsOf(options: KubernetesBackendOptions): TenantPools<PoolRequest, PreparedPod> | undefined {
  const config = options.warmPool;
  if (!config || config.size === 0) return undefined;
  return tenantPools({
    backend: kubernetesPoolBackend({ cluster: options.cluster, ttlMs: config.ttlMs }),
    size: config.size,
    maxIdleMs: config.maxIdleMs,
    ...(config.maxKeys ? { maxKeys: config.maxKeys } : {}),
    ...(options.log ? { log: options.log } : {}),
  });
}
