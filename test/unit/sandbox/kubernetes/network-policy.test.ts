import type { V1NetworkPolicy } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import {
  buildDenyAllPolicy,
  DENY_ALL_POLICY,
  ensureDenyAllPolicy,
  isDenyAllPolicy,
  type KubernetesCluster,
} from "../../../../src/sandbox/kubernetes/index.js";

const apiError = (code: number, message: string) =>
  Object.assign(new Error(`HTTP ${code}`), { code, body: JSON.stringify({ message }) });

/** A cluster whose networking API keeps one policy in memory and logs each call. */
function fakeCluster(initial: V1NetworkPolicy | null, refuse?: number) {
  let stored = initial;
  const calls: string[] = [];
  const guard = (verb: string) => {
    calls.push(verb);
    if (refuse) throw apiError(refuse, `networkpolicies is forbidden: cannot ${verb}`);
  };
  const networking = {
    readNamespacedNetworkPolicy: async () => {
      guard("get");
      if (!stored) throw apiError(404, "not found");
      return stored;
    },
    createNamespacedNetworkPolicy: async ({ body }: { body: V1NetworkPolicy }) => {
      guard("create");
      stored = { ...body, metadata: { ...body.metadata, resourceVersion: "1" } };
      return stored;
    },
    replaceNamespacedNetworkPolicy: async ({ body }: { body: V1NetworkPolicy }) => {
      guard(`update@${body.metadata?.resourceVersion}`);
      stored = body;
      return stored;
    },
  };
  const cluster = { namespace: "ns1", networking } as unknown as KubernetesCluster;
  return { cluster, calls, stored: () => stored };
}

describe("the deny-all NetworkPolicy", () => {
  it("selects exactly the warden Pods and denies both directions with no rule", () => {
    expect(buildDenyAllPolicy("ns1")).toEqual({
      apiVersion: "networking.k8s.io/v1",
      kind: "NetworkPolicy",
      metadata: {
        name: "warden-deny-all",
        namespace: "ns1",
        labels: { "app.kubernetes.io/managed-by": "warden" },
      },
      spec: {
        podSelector: { matchLabels: { "app.kubernetes.io/managed-by": "warden" } },
        policyTypes: ["Ingress", "Egress"],
      },
    });
    expect(isDenyAllPolicy(buildDenyAllPolicy("ns1"))).toBe(true);
  });

  it("is not deny-all with an allowing rule, a missing direction or another selector", () => {
    const base = buildDenyAllPolicy("ns1");
    const spec = base.spec!;
    expect(isDenyAllPolicy({ ...base, spec: { ...spec, egress: [{}] } })).toBe(false);
    expect(isDenyAllPolicy({ ...base, spec: { ...spec, ingress: [{ _from: [] }] } })).toBe(false);
    expect(isDenyAllPolicy({ ...base, spec: { ...spec, policyTypes: ["Ingress"] } })).toBe(false);
    expect(isDenyAllPolicy({ ...base, spec: { ...spec, podSelector: { matchLabels: { app: "x" } } } })).toBe(
      false,
    );
    const { spec: _, ...withoutSpec } = base;
    expect(isDenyAllPolicy(withoutSpec)).toBe(false);
  });

  it("is created when missing, once per cluster connection", async () => {
    const fake = fakeCluster(null);
    await ensureDenyAllPolicy(fake.cluster);
    await ensureDenyAllPolicy(fake.cluster);
    expect(fake.calls).toEqual(["get", "create"]);
    expect(isDenyAllPolicy(fake.stored()!)).toBe(true);
  });

  it("is left alone when it is right, and replaced (at its resourceVersion) when someone changed it", async () => {
    const right = fakeCluster(buildDenyAllPolicy("ns1"));
    await ensureDenyAllPolicy(right.cluster);
    expect(right.calls).toEqual(["get"]);

    const opened = buildDenyAllPolicy("ns1");
    opened.metadata!.resourceVersion = "7";
    opened.spec!.egress = [{}];
    const changed = fakeCluster(opened);
    await ensureDenyAllPolicy(changed.cluster);
    expect(changed.calls).toEqual(["get", "update@7"]);
    expect(changed.stored()!.spec).toEqual(buildDenyAllPolicy("ns1").spec);
  });

  it("names the RBAC rights to grant when the API refuses, and tries again next time", async () => {
    const fake = fakeCluster(null, 403);
    const refused = ensureDenyAllPolicy(fake.cluster);
    await expect(refused).rejects.toMatchObject({ code: "SANDBOX_ERROR" });
    await expect(refused).rejects.toThrow(
      `ensuring NetworkPolicy ns1/${DENY_ALL_POLICY}: refused by the API server (403: networkpolicies is forbidden: cannot get); give the kubeconfig's user get, create and update on networkpolicies (API group networking.k8s.io) in the namespace, or have an administrator create the NetworkPolicy ${DENY_ALL_POLICY} (then get is enough).`,
    );
    await expect(ensureDenyAllPolicy(fake.cluster)).rejects.toThrow("403");
    expect(fake.calls).toEqual(["get", "get"]);
  });
});
