/**
 * The deny-all NetworkPolicy of a namespace's sandbox Pods: one object per namespace,
 * `warden-deny-all`, selecting every Pod labelled `app.kubernetes.io/managed-by=warden` with
 * policy types Ingress and Egress and no rule, so a cluster whose network plugin enforces
 * NetworkPolicies lets no packet in or out of a sandbox Pod (Kubernetes' documented "default deny
 * all ingress and all egress traffic" policy, narrowed to warden's Pods). Where the plugin does
 * not enforce them the object is inert, and the Pod's own lack of a route is what holds.
 *
 * One per namespace rather than one per Pod: a label selector covers every Pod, present and
 * future, including warm pool spares and Pods adopted after a restart, with no object to create,
 * delete or leak per session, and a Pod is never running before its policy exists (it is ensured
 * before the first Pod is created). It needs `get`, `create` and `update` on
 * `networkpolicies.networking.k8s.io` in the namespace, or only `get` when an administrator has
 * created the exact object (docs/kubernetes.md, "NetworkPolicy").
 */
import type { V1NetworkPolicy } from "@kubernetes/client-node";
import { omitUndefined } from "../../util/index.js";
import { apiStatus, fromKubeError, type KubernetesCluster } from "./cluster.js";
import { MANAGED_BY } from "./pod-labels.js";

/** Name of the deny-all NetworkPolicy in each namespace of sandbox Pods. */
export const DENY_ALL_POLICY = "warden-deny-all";

/** What a 401/403 of ensureDenyAllPolicy asks the operator to do. */
const POLICY_FIX = `give the kubeconfig's user get, create and update on networkpolicies (API group networking.k8s.io) in the namespace, or have an administrator create the NetworkPolicy ${DENY_ALL_POLICY} (then get is enough)`;

/** The deny-all NetworkPolicy of `namespace` (pure): ingress and egress denied to every warden Pod. */
export function buildDenyAllPolicy(namespace: string): V1NetworkPolicy {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: {
      name: DENY_ALL_POLICY,
      namespace,
      labels: { [MANAGED_BY.key]: MANAGED_BY.value },
    },
    spec: {
      podSelector: { matchLabels: { [MANAGED_BY.key]: MANAGED_BY.value } },
      policyTypes: ["Ingress", "Egress"],
    },
  };
}

/**
 * Whether `policy` denies all ingress and egress to exactly the warden Pods (pure): the selector
 * is the managed-by label alone, both policy types are listed, and there is no allowing rule.
 */
export function isDenyAllPolicy(policy: V1NetworkPolicy): boolean {
  const spec = policy.spec;
  if (!spec) return false;
  const labels = spec.podSelector?.matchLabels ?? {};
  const selectsWarden =
    Object.keys(labels).length === 1 &&
    labels[MANAGED_BY.key] === MANAGED_BY.value &&
    (spec.podSelector?.matchExpressions ?? []).length === 0;
  const types = spec.policyTypes ?? [];
  return (
    selectsWarden &&
    types.includes("Ingress") &&
    types.includes("Egress") &&
    (spec.ingress ?? []).length === 0 &&
    (spec.egress ?? []).length === 0
  );
}

// One check per cluster connection (a KubernetesCluster object); forgotten when it fails.
const ensured = new WeakMap<KubernetesCluster, Promise<void>>();

/**
 * Makes sure `cluster.namespace` has the deny-all policy before a Pod is created there: reads it,
 * creates it when missing (a concurrent creator's 409 is fine when its object is right), and
 * replaces it when someone changed its spec. Done once per `cluster` object; a failure is not
 * remembered, so the next Pod tries again. Rejects SandboxError naming the rights to grant when
 * the API refuses (401/403), SandboxError with the API's message otherwise.
 */
export function ensureDenyAllPolicy(cluster: KubernetesCluster): Promise<void> {
  let done = ensured.get(cluster);
  if (!done) {
    done = applyDenyAllPolicy(cluster);
    ensured.set(cluster, done);
    done.catch(() => ensured.delete(cluster));
  }
  return done;
}

/** The read, create-or-replace of ensureDenyAllPolicy, without the memo. */
async function applyDenyAllPolicy(cluster: KubernetesCluster): Promise<void> {
  const { networking, namespace } = cluster;
  const what = `ensuring NetworkPolicy ${namespace}/${DENY_ALL_POLICY}`;
  const wanted = buildDenyAllPolicy(namespace);
  try {
    const current = await readPolicy(cluster);
    if (!current) {
      try {
        await networking.createNamespacedNetworkPolicy({ namespace, body: wanted });
        return;
      } catch (err) {
        // Another replica created it meanwhile: judge its object like any existing one.
        if (apiStatus(err) !== 409) throw err;
      }
    }
    const existing = current ?? (await readPolicy(cluster));
    if (existing && isDenyAllPolicy(existing)) return;
    await networking.replaceNamespacedNetworkPolicy({
      name: DENY_ALL_POLICY,
      namespace,
      body: {
        ...wanted,
        metadata: {
          ...wanted.metadata,
          ...omitUndefined({ resourceVersion: existing?.metadata?.resourceVersion }),
        },
      },
    });
  } catch (err) {
    throw fromKubeError(err, what, POLICY_FIX);
  }
}

/** The namespace's deny-all policy, or null when it does not exist. */
async function readPolicy(cluster: KubernetesCluster): Promise<V1NetworkPolicy | null> {
  try {
    return await cluster.networking.readNamespacedNetworkPolicy({
      name: DENY_ALL_POLICY,
      namespace: cluster.namespace,
    });
  } catch (err) {
    if (apiStatus(err) === 404) return null;
    throw err;
  }
}
