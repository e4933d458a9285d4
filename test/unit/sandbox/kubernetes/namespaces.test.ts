import type { V1NetworkPolicy } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import type { KubernetesCluster } from "../../../../src/sandbox/kubernetes/index.js";
import {
  checkNamespaces,
  type ServerCluster,
  tenantClusters,
} from "../../../../src/sandbox/kubernetes/tenant-clusters.js";
import {
  allNamespaces,
  tenantNamespace,
  tenantsIn,
} from "../../../../src/sandbox/kubernetes/tenant-namespaces.js";

const apiError = (code: number, message: string) =>
  Object.assign(new Error(`HTTP ${code}`), { code, body: JSON.stringify({ message }) });

/**
 * A cluster whose API knows the namespaces `existing` (as the API server does: listing Pods of a
 * missing namespace is an empty list, creating an object there a 404) and refuses everything in
 * the namespaces `forbidden` with 403; it records the deny-all policies it stores.
 */
function fakeCluster(existing: string[], forbidden: string[] = []): ServerCluster & { policies: string[] } {
  const policies: string[] = [];
  const guard = (namespace: string, what: string) => {
    if (forbidden.includes(namespace))
      throw apiError(403, `${what} is forbidden: User "warden" cannot do it in the namespace "${namespace}"`);
  };
  const core = {
    listNamespacedPod: async ({ namespace }: { namespace: string }) => {
      guard(namespace, "pods");
      return { items: [] };
    },
  };
  const networking = {
    readNamespacedNetworkPolicy: async ({ namespace }: { namespace: string }) => {
      guard(namespace, "networkpolicies");
      throw apiError(404, 'networkpolicies.networking.k8s.io "warden-deny-all" not found');
    },
    createNamespacedNetworkPolicy: async ({
      namespace,
      body,
    }: {
      namespace: string;
      body: V1NetworkPolicy;
    }) => {
      guard(namespace, "networkpolicies");
      if (!existing.includes(namespace)) throw apiError(404, `namespaces "${namespace}" not found`);
      policies.push(namespace);
      return body;
    },
  };
  const cluster = { namespace: "warden", core, networking, replicaId: "r0" } as unknown as KubernetesCluster;
  return Object.assign(cluster, { replicaId: "r0", policies });
}

describe("tenant namespaces (backend.tenantNamespaces)", () => {
  const map = { globex: "warden-globex", initech: "warden-globex", umbrella: "warden-umbrella" };

  it("gives each tenant its namespace, the main one to a tenant not listed, each namespace once, main first", () => {
    expect(tenantNamespace("warden", map, "globex")).toBe("warden-globex");
    expect(tenantNamespace("warden", map, "acme")).toBe("warden");
    expect(tenantNamespace("warden", undefined, "acme")).toBe("warden");
    // A tenant named like an Object.prototype member is not listed (found by an attack: the lookup
    // gave Object's own constructor function).
    for (const tenant of ["constructor", "toString", "__proto__", "hasOwnProperty"])
      expect(tenantNamespace("warden", map, tenant)).toBe("warden");
    expect(allNamespaces("warden", map)).toEqual(["warden", "warden-globex", "warden-umbrella"]);
    expect(allNamespaces("warden", { acme: "warden" })).toEqual(["warden"]);
    expect(tenantsIn("warden-globex", map)).toEqual(["globex", "initech"]);
  });

  it("makes one cluster view per namespace, shared by the tenants mapped to it, with the same clients", () => {
    const main = fakeCluster([]);
    const clusters = tenantClusters(main, map);
    expect(clusters.all().map((c) => c.namespace)).toEqual(["warden", "warden-globex", "warden-umbrella"]);
    expect(clusters.of("acme")).toBe(main);
    expect(clusters.of("globex")).toBe(clusters.of("initech"));
    expect(clusters.of("umbrella")).toMatchObject({ namespace: "warden-umbrella", replicaId: "r0" });
    expect(clusters.of("umbrella").core).toBe(main.core);
  });

  it("at start puts the deny-all NetworkPolicy into every namespace, the main one first", async () => {
    const main = fakeCluster(["warden", "warden-globex", "warden-umbrella"]);
    await checkNamespaces(tenantClusters(main, map), map);
    expect(main.policies).toEqual(["warden", "warden-globex", "warden-umbrella"]);
  });

  it("refuses a tenant namespace that does not exist, naming it, its tenants and the fix, and creates none", async () => {
    const main = fakeCluster(["warden", "warden-umbrella"]);
    await expect(checkNamespaces(tenantClusters(main, map), map)).rejects.toThrow(
      "namespace warden-globex (backend.tenantNamespaces, tenant(s) 'globex', 'initech') does not exist; warden never creates namespaces: have the cluster administrator create it and bind warden's Role (its rights are listed in docs/kubernetes.md, \"NetworkPolicy\": pods, pods/exec, networkpolicies) in that namespace; each tenant namespace needs its own RoleBinding.",
    );
    expect(main.policies).toEqual(["warden"]);
  });

  it("refuses a missing main namespace, naming backend.namespace", async () => {
    await expect(checkNamespaces(tenantClusters(fakeCluster([])), undefined)).rejects.toThrow(
      "namespace warden (backend.namespace) does not exist; warden never creates namespaces",
    );
  });

  it("refuses a tenant namespace where warden's Role is not bound, naming the namespace and the binding", async () => {
    const main = fakeCluster(["warden", "warden-globex", "warden-umbrella"], ["warden-umbrella"]);
    await expect(checkNamespaces(tenantClusters(main, map), map)).rejects.toThrow(
      'listing Pods in namespace warden-umbrella (backend.tenantNamespaces, tenant(s) \'umbrella\'): refused by the API server (403: pods is forbidden: User "warden" cannot do it in the namespace "warden-umbrella"); bind warden\'s Role (its rights are listed in docs/kubernetes.md, "NetworkPolicy": pods, pods/exec, networkpolicies) in that namespace; each tenant namespace needs its own RoleBinding.',
    );
  });
});
