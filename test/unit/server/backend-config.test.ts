import { describe, expect, it } from "vitest";
import { hashKey } from "../../../src/server/auth.js";
import { resolveServerConfig } from "../../../src/server/config.js";

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
    });
    expect(cfg.tenants[0]?.workspaceModes).toEqual(["copy"]);
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
});
