import { ApiException } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { NoRoomError } from "../../../../src/errors.js";
import {
  connectCluster,
  fromKubeError,
  loadKubernetesClient,
} from "../../../../src/sandbox/kubernetes/index.js";

// The API client is loaded on demand (src/sandbox/kubernetes/client.ts).
await loadKubernetesClient();

describe("connectCluster", () => {
  it("refuses a heartbeatMs outside 1 s to 1 h, naming the field and a sound value", () => {
    for (const heartbeatMs of [0, 999, 1500.5, 3_600_001, Number.NaN])
      expect(() => connectCluster({ namespace: "warden", heartbeatMs })).toThrow(
        `backend.heartbeatMs ${JSON.stringify(heartbeatMs)} is not an integer from 1000 to 3600000 (ms between pings of an idle session's helper); keep it well below the node's streaming idle timeout (containerd stream_idle_timeout, default 4 h), e.g. 60000.`,
      );
  });
});

describe("connectCluster: requestTimeoutMs", () => {
  it("refuses a requestTimeoutMs outside 1 s to 10 min, naming the field and a sound value", () => {
    for (const requestTimeoutMs of [0, 999, 600_001, 1.5, "x" as unknown as number])
      expect(() => connectCluster({ namespace: "warden", requestTimeoutMs })).toThrow(
        `backend.requestTimeoutMs ${JSON.stringify(requestTimeoutMs)} is not an integer from 1000 to 600000 (ms a Kubernetes API request may take); e.g. 30000 (kube-apiserver's own --request-timeout is 60 s).`,
      );
  });

  it("takes one from 1 s to 10 min (its default, 30 s, is request-deadline.test.ts's)", () => {
    for (const requestTimeoutMs of [1000, 600_000])
      expect(connectCluster({ namespace: "warden", requestTimeoutMs }).namespace).toBe("warden");
  });
});

describe("fromKubeError", () => {
  const status = (code: number, message: string) =>
    new ApiException(code, "refused", JSON.stringify({ kind: "Status", reason: "Forbidden", message }), {});

  it("names a used-up ResourceQuota and its fix, not RBAC rights, when the quota refuses a Pod", () => {
    // The ResourceQuota admission plugin's refusal (kube-apiserver v1.34), as a namespace with pods: 0 gives it.
    const quota =
      'pods "warden-x" is forbidden: exceeded quota: sessions, requested: pods=1, used: pods=0, limited: pods=0';
    const err = fromKubeError(status(403, quota), "creating Pod ns/warden-x");
    expect([err instanceof NoRoomError, err.code]).toEqual([true, "NO_ROOM"]);
    expect(err.message).toBe(
      `creating Pod ns/warden-x: the namespace's ResourceQuota is used up (${quota}); end sessions or warm pool spares there, or raise the quota (kubectl describe resourcequota).`,
    );
  });

  it("names RBAC rights for any other 403", () => {
    const rbac =
      'pods is forbidden: User "u" cannot create resource "pods" in API group "" in the namespace "ns"';
    expect(fromKubeError(status(403, rbac), "creating Pod ns/warden-x").message).toBe(
      `creating Pod ns/warden-x: refused by the API server (403: ${rbac}); give the kubeconfig's user rights on pods and pods/exec in the namespace.`,
    );
  });
});
