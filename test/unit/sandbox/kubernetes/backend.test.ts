import type { V1Pod } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { type KubernetesCluster, podLabels } from "../../../../src/sandbox/kubernetes/index.js";
import { type ServerCluster, tenantClusters } from "../../../../src/sandbox/kubernetes/tenant-clusters.js";
import { createKubernetesBackend } from "../../../../src/server/sessions/kubernetes-backend.js";
import type { SessionRecord } from "../../../../src/server/sessions/record-store.js";

const apiError = (code: number) => Object.assign(new Error(`HTTP ${code}`), { code });

/** Pods by namespace, in memory, behind the three calls the backend's reconcile side makes. */
function fakePods(): { cluster: ServerCluster; pods: Map<string, V1Pod[]>; calls: string[] } {
  const pods = new Map<string, V1Pod[]>();
  const calls: string[] = [];
  const inNs = (namespace: string) => pods.get(namespace) ?? [];
  const core = {
    listNamespacedPod: async ({ namespace, labelSelector }: { namespace: string; labelSelector: string }) => {
      calls.push(`list ${namespace} ${labelSelector}`);
      return { items: inNs(namespace) };
    },
    readNamespacedPod: async ({ name, namespace }: { name: string; namespace: string }) => {
      calls.push(`read ${namespace}/${name}`);
      const pod = inNs(namespace).find((p) => p.metadata?.name === name);
      if (!pod) throw apiError(404);
      return pod;
    },
    deleteNamespacedPod: async ({ name, namespace }: { name: string; namespace: string }) => {
      calls.push(`delete ${namespace}/${name}`);
      const left = inNs(namespace).filter((p) => p.metadata?.name !== name);
      if (left.length === inNs(namespace).length) throw apiError(404);
      pods.set(namespace, left);
    },
  };
  const cluster = { namespace: "warden", core, replicaId: "r0" } as unknown as KubernetesCluster;
  return { cluster: { ...cluster, replicaId: "r0" }, pods, calls };
}

/** A running Pod of `tenant`'s session `sessionId`, owned by replica r0, in `namespace`. */
function pod(namespace: string, name: string, tenant: string, sessionId: string): V1Pod {
  const now = new Date();
  return {
    metadata: {
      name,
      namespace,
      labels: podLabels({
        sessionId,
        tenant,
        controller: "serve@r0",
        createdAt: now,
        expiresAt: now,
        replica: "r0",
      }),
      annotations: { "io.warden.controller": "serve@r0" },
    },
    status: { phase: "Running" },
  };
}

const record = (tenant: string, containerId: string): SessionRecord => ({
  version: 1,
  id: "s1",
  tenant,
  containerId,
  image: "warden-sandbox:latest",
  workspaceMode: "copy",
  limits: {},
  createdAt: new Date().toISOString(),
  expiresAt: new Date(Date.now() + 60_000).toISOString(),
});

describe("the Kubernetes backend with backend.tenantNamespaces", () => {
  const map = { globex: "warden-globex" };

  it("lists its own Pods in every namespace it uses, each with its namespace, and removes each in its own", async () => {
    const { cluster, pods, calls } = fakePods();
    pods.set("warden", [pod("warden", "warden-a1", "acme", "a1")]);
    pods.set("warden-globex", [pod("warden-globex", "warden-g1", "globex", "g1")]);
    const backend = createKubernetesBackend({ clusters: tenantClusters(cluster, map) });
    const listed = await backend.listContainers(["acme", "globex"]);
    expect(listed.map((c) => [c.namespace, c.containerId, c.tenant])).toEqual([
      ["warden", "warden-a1", "acme"],
      ["warden-globex", "warden-g1", "globex"],
    ]);
    const own = "app.kubernetes.io/managed-by=warden,io.warden.replica=r0";
    expect(calls).toEqual([`list warden ${own}`, `list warden-globex ${own}`]);
    await backend.removeContainer(listed[1]!);
    expect(calls.at(-2)).toBe("delete warden-globex/warden-g1");
    expect(pods.get("warden-globex")).toEqual([]);
  });

  it("adopts a session only from its tenant's namespace: a record naming another namespace's Pod is not adopted", async () => {
    const { cluster, pods, calls } = fakePods();
    // globex's Pod lives in globex's namespace; a record of tenant acme naming it looks in acme's.
    pods.set("warden-globex", [pod("warden-globex", "warden-g1", "acme", "s1")]);
    const backend = createKubernetesBackend({ clusters: tenantClusters(cluster, map) });
    expect(await backend.adopt(record("acme", "warden-g1"), { tenant: "acme" })).toBeNull();
    expect(calls).toEqual(["read warden/warden-g1"]);
    // And a globex record never reads the main namespace.
    pods.set("warden", [pod("warden", "warden-a1", "globex", "s1")]);
    calls.length = 0;
    expect(await backend.adopt(record("globex", "warden-a1"), { tenant: "globex" })).toBeNull();
    expect(calls).toEqual(["read warden-globex/warden-a1"]);
  });
});
