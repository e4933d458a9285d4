/**
 * The namespaces of a Kubernetes `warden serve`: the main one (`backend.namespace`, also home of
 * the replica Leases) and each tenant's own (`backend.tenantNamespaces`, tenant-namespaces.ts).
 * One cluster view per namespace (the same API clients, its own `namespace`), made once, so what
 * is done once per view (the deny-all NetworkPolicy check) is done once per namespace. At start
 * every namespace is checked before any Pod is listed or made: it exists, warden's rights hold in
 * it, and it has the deny-all NetworkPolicy. warden never creates a namespace.
 */
import { NotFoundError, SandboxError, WardenError } from "../../errors.js";
import { fromKubeError, type KubernetesCluster } from "./cluster.js";
import { ensureDenyAllPolicy } from "./network-policy.js";
import { WARDEN_POD_SELECTOR } from "./pod-labels.js";
import { allNamespaces, type TenantNamespaces, tenantNamespace, tenantsIn } from "./tenant-namespaces.js";

/** A cluster view of a server: its Pods carry `replicaId`. */
export type ServerCluster = KubernetesCluster & { replicaId: string };

/** The views of every namespace a server uses. */
export interface TenantClusters {
  /** The main namespace's view (`backend.namespace`; the replica Leases live there). */
  readonly main: ServerCluster;
  /** The view of `tenant`'s namespace (the main one for a tenant not mapped). */
  of(tenant: string): ServerCluster;
  /** One view per namespace, the main one first. */
  all(): readonly ServerCluster[];
}

/** The views of `main`'s namespace and of each namespace `tenantNamespaces` names. */
export function tenantClusters(main: ServerCluster, tenantNamespaces?: TenantNamespaces): TenantClusters {
  const views = new Map<string, ServerCluster>([[main.namespace, main]]);
  for (const namespace of allNamespaces(main.namespace, tenantNamespaces))
    if (!views.has(namespace)) views.set(namespace, { ...main, namespace });
  return {
    main,
    of: (tenant) => views.get(tenantNamespace(main.namespace, tenantNamespaces, tenant)) ?? main,
    all: () => [...views.values()],
  };
}

/** What the operator is told to do in a namespace warden cannot use. */
const BIND_FIX = `bind warden's Role (its rights are listed in docs/kubernetes.md, "NetworkPolicy": pods, pods/exec, networkpolicies) in that namespace; each tenant namespace needs its own RoleBinding`;

/**
 * Checks every namespace of `clusters` in turn, before the server lists or makes a Pod: that
 * warden may list Pods there, then ensureDenyAllPolicy (which is also what finds a missing
 * namespace: creating the policy there is a 404). Rejects NotFoundError for a namespace that does
 * not exist, SandboxError for missing rights (RBAC) or another API failure; each message names
 * the namespace, the config field and the tenants mapped to it.
 */
export async function checkNamespaces(
  clusters: TenantClusters,
  tenantNamespaces: TenantNamespaces | undefined,
): Promise<void> {
  for (const cluster of clusters.all()) {
    const { namespace } = cluster;
    const tenants = tenantsIn(namespace, tenantNamespaces);
    const field =
      namespace === clusters.main.namespace
        ? "backend.namespace"
        : `backend.tenantNamespaces, tenant(s) ${tenants.map((t) => `'${t}'`).join(", ")}`;
    try {
      await cluster.core.listNamespacedPod({ namespace, labelSelector: WARDEN_POD_SELECTOR, limit: 1 });
    } catch (err) {
      throw fromKubeError(err, `listing Pods in namespace ${namespace} (${field})`, BIND_FIX);
    }
    try {
      await ensureDenyAllPolicy(cluster);
    } catch (err) {
      if (err instanceof NotFoundError)
        throw new NotFoundError(
          `namespace ${namespace} (${field}) does not exist; warden never creates namespaces: have the cluster administrator create it and ${BIND_FIX}.`,
        );
      if (err instanceof WardenError && namespace !== clusters.main.namespace)
        throw new SandboxError(`${err.message} (namespace of ${field})`, { cause: err });
      throw err;
    }
  }
}
