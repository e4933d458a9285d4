import { describe, expect, it } from "vitest";
import {
  defaultReplicaId,
  resolveServerConfig,
  serverControllerId,
} from "../../../../src/server/config/index.js";
import { hashKey } from "../../../../src/server/tenancy/auth.js";

const quotas = {
  maxSessions: 1,
  maxConcurrentToolCalls: 2,
  cpus: 1,
  memoryBytes: 67108864,
  workspaceBytes: 1000,
};
const tenant = (over: Record<string, unknown> = {}) => ({
  id: "acme",
  keys: [{ id: "k", sha256: hashKey("t") }],
  quotas,
  ...over,
});
const load = (backend: unknown, t = tenant()) =>
  resolveServerConfig({ backend, tenants: [t] }, "/etc/warden", "serve.yaml");

describe("warden serve: backend config", () => {
  it("is Docker when absent, and then tenants keep copy and ro workspaces", () => {
    const cfg = resolveServerConfig({ tenants: [tenant()] }, "/etc/warden");
    expect(cfg.backend).toEqual({ kind: "docker" });
    expect(cfg.tenants[0]?.workspaceModes).toEqual(["copy", "ro"]);
  });

  it("resolves kind kubernetes with its namespace, RuntimeClass and kubeconfig (relative to the file)", () => {
    const cfg = load({
      kind: "kubernetes",
      namespace: "warden",
      runtimeClassName: "gvisor",
      kubeconfig: "kube/admin.conf",
      imagePullPolicy: "Never",
      startTimeoutMs: 30000,
    });
    expect(cfg.backend).toEqual({
      kind: "kubernetes",
      namespace: "warden",
      runtimeClassName: "gvisor",
      kubeconfig: "/etc/warden/kube/admin.conf",
      imagePullPolicy: "Never",
      startTimeoutMs: 30000,
      replicaId: defaultReplicaId("/etc/warden/warden-state"),
    });
    expect(cfg.tenants[0]?.workspaceModes).toEqual(["copy"]);
  });

  it("takes requestTimeoutMs from 1 s to 10 min, refuses other values naming the field, and leaves it out when absent", () => {
    const k8s = (requestTimeoutMs: unknown) =>
      load({ kind: "kubernetes", namespace: "warden", requestTimeoutMs });
    expect(k8s(45000).backend).toMatchObject({ kind: "kubernetes", requestTimeoutMs: 45000 });
    // Absent: connectCluster applies DEFAULT_REQUEST_TIMEOUT_MS (30 s).
    expect(load({ kind: "kubernetes", namespace: "warden" }).backend).not.toHaveProperty("requestTimeoutMs");
    const bad = "serve.yaml: invalid server configuration: /backend/requestTimeoutMs must be";
    expect(() => k8s(0)).toThrow(`${bad} >= 1000.`);
    expect(() => k8s(999)).toThrow(`${bad} >= 1000.`);
    expect(() => k8s(600_001)).toThrow(`${bad} <= 600000.`);
    expect(() => k8s(1.5)).toThrow(`${bad} integer; /backend/requestTimeoutMs must be >= 1000.`);
    expect(() => k8s(1500.5)).toThrow(`${bad} integer.`);
    expect(() => k8s("x")).toThrow(`${bad} integer.`);
    expect(() => load({ kind: "docker", requestTimeoutMs: 30000 })).toThrow(
      "serve.yaml/backend/requestTimeoutMs applies to kind kubernetes only; remove it or set kind: kubernetes.",
    );
  });

  it("takes heartbeatMs from 1 s to 1 h, and refuses other values naming the field", () => {
    const k8s = (heartbeatMs: unknown) => load({ kind: "kubernetes", namespace: "warden", heartbeatMs });
    expect(k8s(20000).backend).toMatchObject({ kind: "kubernetes", heartbeatMs: 20000 });
    const bad = "serve.yaml: invalid server configuration: /backend/heartbeatMs must be";
    expect(() => k8s(500)).toThrow(`${bad} >= 1000.`);
    expect(() => k8s(3_600_001)).toThrow(`${bad} <= 3600000.`);
    expect(() => k8s(1500.5)).toThrow(`${bad} integer.`);
    expect(() => load({ kind: "docker", heartbeatMs: 20000 })).toThrow(
      "serve.yaml/backend/heartbeatMs applies to kind kubernetes only; remove it or set kind: kubernetes.",
    );
  });

  it("refuses kind kubernetes without a namespace, saying what to add", () => {
    expect(() => load({ kind: "kubernetes" })).toThrow(
      "serve.yaml/backend: kind kubernetes needs a namespace (the one its session Pods go to), e.g. namespace: warden.",
    );
  });

  it("refuses a Kubernetes field under kind docker, naming it", () => {
    expect(() => load({ kind: "docker", namespace: "x" })).toThrow(
      "serve.yaml/backend/namespace applies to kind kubernetes only; remove it or set kind: kubernetes.",
    );
  });

  it("refuses an unknown kind or field through the schema, naming the path", () => {
    expect(() => load({ kind: "nomad" })).toThrow("/backend/kind");
    expect(() => load({ kind: "kubernetes", namespace: "w", nodes: 3 })).toThrow("/backend");
  });

  it("refuses on Kubernetes what a Pod cannot do: ro/rw workspaces, network egress, a tenant id that is no label value", () => {
    const k8s = { kind: "kubernetes", namespace: "warden" };
    expect(() => load(k8s, tenant({ workspaceModes: ["copy", "rw"] }))).toThrow(
      "serve.yaml: /tenants/0/workspaceModes: rw bind-mount a host directory, which the Kubernetes backend cannot; use [copy].",
    );
    expect(() => load(k8s, tenant({ network: { allow: ["example.com"] } }))).toThrow(
      "serve.yaml: /tenants/0/network: network egress is not available on the Kubernetes backend yet",
    );
    expect(() => load(k8s, tenant({ id: "acme-" }))).toThrow(
      "serve.yaml: /tenants/0/id 'acme-' cannot label a Kubernetes Pod (it must end with a letter or digit); rename the tenant.",
    );
  });

  it("takes a replicaId that can label a Pod, and refuses one that cannot, naming the field and the fix", () => {
    const k8s = { kind: "kubernetes", namespace: "warden" };
    const named = load({ ...k8s, replicaId: "warden-0" }).backend;
    expect(named).toMatchObject({ replicaId: "warden-0" });
    // The server's sandboxes name it as their controller.
    expect(serverControllerId("/srv/a", named)).toBe("serve@warden-0");
    expect(() => load({ ...k8s, replicaId: "warden/0" })).toThrow(
      "serve.yaml/backend/replicaId \"warden/0\" cannot label a Kubernetes Pod (at most 63 of A-Z a-z 0-9 _ . -, starting and ending with a letter or digit); use e.g. the StatefulSet Pod's name (warden-0), the same on every restart of this replica and different from every other replica's.",
    );
    expect(() => load({ ...k8s, replicaId: "r".repeat(64) })).toThrow("/backend/replicaId");
    expect(() => load({ ...k8s, replicaId: "" })).toThrow("/backend/replicaId");
    expect(() => load({ kind: "docker", replicaId: "warden-0" })).toThrow(
      "serve.yaml/backend/replicaId applies to kind kubernetes only",
    );
  });

  it("defaults the replica id to the host name and the state directory's digest: stable per directory, distinct across directories", () => {
    const a = resolveServerConfig(
      { stateDir: "a", backend: { kind: "kubernetes", namespace: "w" }, tenants: [tenant()] },
      "/srv",
    );
    const b = resolveServerConfig(
      { stateDir: "b", backend: { kind: "kubernetes", namespace: "w" }, tenants: [tenant()] },
      "/srv",
    );
    const idOf = (c: typeof a) => (c.backend?.kind === "kubernetes" ? c.backend.replicaId : "");
    expect(idOf(a)).toBe(defaultReplicaId("/srv/a"));
    expect(idOf(a)).not.toBe(idOf(b));
    // The server's controller id keeps its form: serve@ and the replica id.
    expect(serverControllerId("/srv/a")).toBe(`serve@${idOf(a)}`);
  });

  it("makes a label value of any host name: other characters as '-', at most 63 in all", () => {
    const digest = defaultReplicaId("/srv/a", "x").slice(2);
    expect(digest).toMatch(/^[0-9a-f]{12}$/);
    expect(defaultReplicaId("/srv/a", "node_1.example")).toBe(`node_1.example-${digest}`);
    expect(defaultReplicaId("/srv/a", "-héllo wörld-")).toBe(`h-llo-w-rld-${digest}`);
    expect(defaultReplicaId("/srv/a", "h".repeat(80))).toBe(`${"h".repeat(50)}-${digest}`);
    expect(defaultReplicaId("/srv/a", "---")).toBe(`serve-${digest}`);
  });
});

describe("warden serve: backend.tenantNamespaces", () => {
  const k8s = { kind: "kubernetes", namespace: "warden" };
  const two = (backend: unknown) =>
    resolveServerConfig(
      { backend, tenants: [tenant(), tenant({ id: "globex", keys: [{ id: "k", sha256: hashKey("g") }] })] },
      "/etc/warden",
      "serve.yaml",
    );

  it("resolves the map of tenants to their own namespaces; tenants not listed keep backend.namespace", () => {
    const cfg = two({ ...k8s, tenantNamespaces: { globex: "warden-globex" } });
    expect(cfg.backend).toMatchObject({ namespace: "warden", tenantNamespaces: { globex: "warden-globex" } });
    // An empty map is no map.
    expect(two({ ...k8s, tenantNamespaces: {} }).backend).not.toHaveProperty("tenantNamespaces");
  });

  it("refuses a namespace that is no DNS-1123 label, naming the field, the tenant and the fix", () => {
    expect(() => two({ ...k8s, tenantNamespaces: { globex: "Warden_Globex" } })).toThrow(
      "serve.yaml/backend/tenantNamespaces/globex \"Warden_Globex\" is not a Kubernetes namespace name (at most 63 of a-z 0-9 -, starting and ending with a letter or digit); name the namespace the cluster administrator created for tenant 'globex'.",
    );
    expect(() => two({ ...k8s, tenantNamespaces: { acme: "a".repeat(64) } })).toThrow(
      "serve.yaml/backend/tenantNamespaces/acme ",
    );
    expect(() => two({ ...k8s, tenantNamespaces: { acme: "warden-" } })).toThrow(
      'serve.yaml/backend/tenantNamespaces/acme "warden-" is not a Kubernetes namespace name',
    );
    expect(() => two({ ...k8s, tenantNamespaces: { acme: "" } })).toThrow(
      'serve.yaml/backend/tenantNamespaces/acme "" is not a Kubernetes namespace name',
    );
  });

  it("refuses an entry of a tenant the config does not have (a typo would put it in the main namespace)", () => {
    expect(() => two({ ...k8s, tenantNamespaces: { globx: "warden-globex" } })).toThrow(
      "serve.yaml/backend/tenantNamespaces/globx: no tenant 'globx' is configured; remove the entry or add the tenant under tenants.",
    );
  });

  it("applies to kind kubernetes only", () => {
    expect(() => two({ kind: "docker", tenantNamespaces: { acme: "warden-acme" } })).toThrow(
      "serve.yaml/backend/tenantNamespaces applies to kind kubernetes only; remove it or set kind: kubernetes.",
    );
  });
});
