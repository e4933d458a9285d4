import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { V1Pod } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../../../src/errors.js";
import type { AdoptRequest } from "../../../../src/sandbox/backend.js";
import type { SandboxSpec } from "../../../../src/sandbox/index.js";
import { kubernetesBackend } from "../../../../src/sandbox/kubernetes/backend.js";
import { type KubernetesCluster, podLabels } from "../../../../src/sandbox/kubernetes/index.js";
import { type ServerCluster, tenantClusters } from "../../../../src/sandbox/kubernetes/tenant-clusters.js";

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

const request = (tenant: string, id: string): AdoptRequest => ({
  id,
  sessionId: "s1",
  tenant,
  image: "warden-sandbox:latest",
  workspaceMode: "copy",
  createdAt: new Date(),
  expiresAt: new Date(Date.now() + 60_000),
});

describe("the Kubernetes backend with backend.tenantNamespaces", () => {
  const map = { globex: "warden-globex" };

  it("lists its own Pods in every namespace it uses, each with its namespace, and removes each in its own", async () => {
    const { cluster, pods, calls } = fakePods();
    pods.set("warden", [pod("warden", "warden-a1", "acme", "a1")]);
    pods.set("warden-globex", [pod("warden-globex", "warden-g1", "globex", "g1")]);
    const backend = kubernetesBackend(tenantClusters(cluster, map));
    const listed = await backend.list(["acme", "globex"]);
    expect(listed.map((c) => [c.namespace, c.id, c.tenant])).toEqual([
      ["warden", "warden-a1", "acme"],
      ["warden-globex", "warden-g1", "globex"],
    ]);
    const own = "app.kubernetes.io/managed-by=warden,io.warden.replica=r0";
    expect(calls).toEqual([`list warden ${own}`, `list warden-globex ${own}`]);
    await backend.remove(listed[1]!);
    expect(calls.at(-2)).toBe("delete warden-globex/warden-g1");
    expect(pods.get("warden-globex")).toEqual([]);
  });

  it("adopts a session only from its tenant's namespace: a record naming another namespace's Pod is not adopted", async () => {
    const { cluster, pods, calls } = fakePods();
    // globex's Pod lives in globex's namespace; a record of tenant acme naming it looks in acme's.
    pods.set("warden-globex", [pod("warden-globex", "warden-g1", "acme", "s1")]);
    const backend = kubernetesBackend(tenantClusters(cluster, map));
    expect(await backend.adopt(request("acme", "warden-g1"))).toBeNull();
    expect(calls).toEqual(["read warden/warden-g1"]);
    // And a globex record never reads the main namespace.
    pods.set("warden", [pod("warden", "warden-a1", "globex", "s1")]);
    calls.length = 0;
    expect(await backend.adopt(request("globex", "warden-a1"))).toBeNull();
    expect(calls).toEqual(["read warden-globex/warden-a1"]);
  });
});

describe("the Kubernetes SandboxBackend's surface", () => {
  const map = { globex: "warden-globex" };

  it("names its namespaces, main first, and gives copy mode, no mounts, no network, the channel, runsc only with a RuntimeClass", () => {
    const { cluster } = fakePods();
    const backend = kubernetesBackend(tenantClusters(cluster, map));
    expect(backend.kind).toBe("kubernetes");
    expect(backend.scopes).toEqual(["warden", "warden-globex"]);
    expect(backend.capabilities).toEqual({
      workspaceModes: ["copy"],
      mounts: false,
      networkModes: ["none"],
      runtimes: ["runc"],
      execPaths: ["channel"],
      warmPool: false,
    });
    const gvisor = kubernetesBackend(tenantClusters({ ...cluster, runtimeClassName: "gvisor" }), {
      warmPool: { size: 1, maxIdleMs: 60_000, ttlMs: 3_600_000 },
    });
    expect(gvisor.capabilities.runtimes).toEqual(["runc", "runsc"]);
    expect(gvisor.capabilities.warmPool).toBe(true);
    expect(backend.poolStats()).toEqual({ idle: 0, backingOff: 0 });
  });

  const refused = (message: string) => ({
    name: InvalidArgumentError.name,
    code: "INVALID_ARGUMENT",
    message,
  });

  it("refuses a spec asking for more than a Pod gives, with requirePodOptions' messages, before any API call", async () => {
    const { cluster, calls } = fakePods();
    const backend = kubernetesBackend(tenantClusters(cluster, map));
    const dir = await mkdtemp(join(tmpdir(), "warden-k8s-spec-"));
    try {
      const refusals: [SandboxSpec, string][] = [
        [
          { workspace: { hostPath: dir, mode: "ro" } },
          'workspace mode "ro" bind-mounts a host directory, which a Kubernetes sandbox cannot; use mode "copy".',
        ],
        [
          { mounts: [{ hostPath: dir, containerPath: "/data" }] },
          "mounts bind host directories, which a Kubernetes sandbox cannot; drop them.",
        ],
        [
          {
            network: { mode: "allowlist", rules: [{ host: "example.com", ports: [443], decision: "allow" }] },
          },
          'network mode "allowlist" is not available on the Kubernetes backend yet; use { mode: "none" }.',
        ],
        [
          { runtime: "runsc" },
          'runtime "runsc" on Kubernetes needs backend.runtimeClassName (e.g. gvisor), which sets the Pods\' runtime.',
        ],
        [
          { execPath: "docker-exec" },
          'execPath "docker-exec" is Docker only; a Kubernetes sandbox uses "channel".',
        ],
      ];
      for (const [spec, message] of refusals) {
        await expect(backend.create(spec, { tenant: "globex" })).rejects.toMatchObject(refused(message));
        await expect(backend.claim(spec, { tenant: "acme" })).rejects.toMatchObject(refused(message));
      }
      expect(calls).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("gc sweeps every namespace it uses, main first; sweep finds nothing beside Pods", async () => {
    const { cluster, pods, calls } = fakePods();
    const expired = (namespace: string, name: string, tenant: string) => {
      const p = pod(namespace, name, tenant, name);
      const expires = { "io.warden.expires": new Date(0).toISOString() };
      return { ...p, metadata: { ...p.metadata, annotations: { ...p.metadata?.annotations, ...expires } } };
    };
    pods.set("warden", [expired("warden", "warden-a1", "acme")]);
    pods.set("warden-globex", [expired("warden-globex", "warden-g1", "globex")]);
    const backend = kubernetesBackend(tenantClusters(cluster, map));
    const removed = await backend.gc({ dryRun: true });
    expect(removed.map((r) => [r.kind, r.id, r.tenant, r.reason])).toEqual([
      ["pod", "warden-a1", "acme", "expired"],
      ["pod", "warden-g1", "globex", "expired"],
    ]);
    expect(calls.map((c) => c.split(" ").slice(0, 2).join(" "))).toEqual([
      "list warden",
      "list warden-globex",
    ]);
    expect(await backend.sweep({ tenants: ["acme"], controllerId: "serve@r0", keep: () => false })).toEqual(
      [],
    );
  });

  it("close releases the replica Lease once, however often it is called", async () => {
    const { cluster } = fakePods();
    const released: string[] = [];
    const lease = { name: "warden-replica-r0", release: async () => void released.push("released") };
    const backend = kubernetesBackend(tenantClusters(cluster, map), {}, lease);
    await Promise.all([backend.close(), backend.close()]);
    await backend.close();
    expect(released).toEqual(["released"]);
  });
});
