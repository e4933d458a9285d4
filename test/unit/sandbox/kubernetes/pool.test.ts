import { ApiException } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import {
  connectCluster,
  fromKubeError,
  kubernetesPoolBackend,
  loadKubernetesClient,
  PodUnschedulableError,
  ResourceQuotaExceededError,
} from "../../../../src/sandbox/kubernetes/index.js";

// The API client is loaded on demand (src/sandbox/kubernetes/client.ts).
await loadKubernetesClient();

describe("kubernetesPoolBackend noRoom", () => {
  const backend = kubernetesPoolBackend({ cluster: connectCluster({ namespace: "warden" }) });
  const quota =
    'pods "warden-x" is forbidden: exceeded quota: sessions, requested: pods=1, used: pods=2, limited: pods=2';
  const forbidden = (message: string) =>
    new ApiException(403, "refused", JSON.stringify({ kind: "Status", reason: "Forbidden", message }), {});

  it("backs off on a used-up ResourceQuota, as on an unschedulable spare (attack: a refill every second, forever)", () => {
    const err = fromKubeError(forbidden(quota), "creating Pod warden/warden-x");
    expect(err).toBeInstanceOf(ResourceQuotaExceededError);
    expect(backend.noRoom?.(err)).toBe(quota);
    expect(backend.noRoom?.(new PodUnschedulableError("warden", "warden-x", "0/1 nodes are available"))).toBe(
      "0/1 nodes are available",
    );
  });

  it("does not back off on other failures (RBAC, a failed image): they retry as before", () => {
    const rbac = fromKubeError(
      forbidden('pods is forbidden: User "u" cannot create resource "pods"'),
      "creating Pod",
    );
    expect(backend.noRoom?.(rbac)).toBeUndefined();
    expect(backend.noRoom?.(new Error("ErrImageNeverPull"))).toBeUndefined();
  });
});
