/**
 * The server config blocks of the docs are what `warden serve` accepts: each is parsed as YAML and
 * resolved by the server's own config loader (resolveServerConfig), with the tenants it names.
 * Running a session on Kubernetes with them is the k8s suite's (test/k8s), which needs a cluster.
 */
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { resolveServerConfig } from "../../../src/server/config/index.js";
import { hashKey } from "../../../src/server/tenancy/auth.js";
import { docSnippet } from "../../helpers/doc-snippets.js";

const tenant = (id: string) => ({
  id,
  keys: [{ id: "k", sha256: hashKey(`${id}-key`) }],
  quotas: { maxSessions: 1, cpus: 1, memoryBytes: 268435456, workspaceBytes: 67108864 },
});

const load = (yaml: string, tenants: string[]) =>
  resolveServerConfig({ ...parse(yaml), tenants: tenants.map(tenant) }, "/etc/warden", "serve.yaml");

describe("the docs' server config blocks load", () => {
  it("README k8s-backend: a Kubernetes backend in namespace warden under gVisor", () => {
    const cfg = load(docSnippet("README.md", "k8s-backend"), ["acme"]);
    expect(cfg.backend).toMatchObject({
      kind: "kubernetes",
      namespace: "warden",
      runtimeClassName: "gvisor",
    });
  });

  it("docs/kubernetes.md k8s-backend-full: every field, tenant globex in a namespace of its own", () => {
    const cfg = load(docSnippet("docs/kubernetes.md", "k8s-backend-full"), ["acme", "globex"]);
    expect(cfg.backend).toMatchObject({
      kind: "kubernetes",
      namespace: "warden",
      kubeconfig: "/etc/warden/kubeconfig",
      replicaId: "warden-0",
      tenantNamespaces: { globex: "warden-globex" },
      heartbeatMs: 60000,
      requestTimeoutMs: 30000,
    });
  });

  it("docs/server-api.md serve-secrets-config: the secret store, the audit key and a tenant's network", () => {
    const parsed = parse(docSnippet("docs/server-api.md", "serve-secrets-config")) as {
      tenants: Array<{ id: string }>;
    };
    // The doc's key hash is a placeholder: the test's tenant gives a real one.
    const tenants = parsed.tenants.map((t) => ({ ...t, ...tenant(t.id) }));
    const cfg = resolveServerConfig({ ...parsed, tenants }, "/etc/warden", "serve.yaml");
    expect(cfg.secrets).toMatchObject({
      keyFile: "/etc/warden/secrets.key",
      storeFile: "/var/lib/warden/secrets.json",
      maxPerTenant: 100,
    });
    expect(cfg.auditSigningKey).toBe("/etc/warden/audit-key.pem");
    expect(cfg.tenants[0]?.network?.rules).toEqual([
      expect.objectContaining({ host: "api.github.com", ports: [443], decision: "allow" }),
    ]);
  });
});
