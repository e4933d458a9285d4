/**
 * The deny-all NetworkPolicy on a real API server: a sandbox's namespace has `warden-deny-all`
 * with the exact spec before its Pod runs, a changed policy is put back, and a kubeconfig without
 * rights on NetworkPolicies is refused with the rights to grant, before any Pod exists, and
 * `warden serve` with it does not start. This
 * cluster's network plugin does not enforce NetworkPolicies, so these tests prove the object,
 * not the enforcement (docs/kubernetes.md, "NetworkPolicy"); the Pod's lack of a route is
 * test/k8s/sandbox.test.ts's.
 */
import { rm } from "node:fs/promises";
import { dirname } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  connectCluster,
  createKubernetesSandbox,
  DENY_ALL_POLICY,
  ensureDenyAllPolicy,
} from "../../src/sandbox/index.js";
import { describeK8s, podLeftovers, TEST_NAMESPACE, testCluster } from "../helpers/k8s.js";
import { type LimitedKubeconfig, limitedKubeconfig } from "../helpers/k8s-rbac.js";
import { run } from "../helpers/sandbox-fixture.js";
import { bundleCli, spawnServe, writeServeConfig } from "../helpers/server-fixture.js";

const TENANT = `test-k8s-np-${process.pid}`;
const WARDEN_PODS = { matchLabels: { "app.kubernetes.io/managed-by": "warden" } };

describeK8s("Kubernetes backend: the deny-all NetworkPolicy", () => {
  const cluster = testCluster();
  const readPolicy = () =>
    cluster.networking.readNamespacedNetworkPolicy({ name: DENY_ALL_POLICY, namespace: TEST_NAMESPACE });

  it("exists with the exact deny-all spec once a sandbox Pod runs, and the Pod has no route", async () => {
    const sandbox = await createKubernetesSandbox({ tenant: TENANT }, cluster);
    try {
      const policy = await readPolicy();
      expect(policy.metadata?.labels).toEqual({ "app.kubernetes.io/managed-by": "warden" });
      expect(policy.spec).toEqual({ podSelector: WARDEN_PODS, policyTypes: ["Ingress", "Egress"] });
      const r = await run(sandbox, "echo > /dev/tcp/1.1.1.1/80");
      expect(r.stderr).toContain("Network is unreachable");
    } finally {
      await sandbox.destroy();
    }
    expect(await podLeftovers(TENANT)).toEqual([]);
  });

  it("is put back when someone opened it (egress to anywhere)", async () => {
    const opened = await readPolicy();
    await cluster.networking.replaceNamespacedNetworkPolicy({
      name: DENY_ALL_POLICY,
      namespace: TEST_NAMESPACE,
      body: { ...opened, spec: { ...opened.spec!, egress: [{}] } },
    });
    expect((await readPolicy()).spec?.egress).toEqual([{}]);
    await ensureDenyAllPolicy(testCluster());
    expect((await readPolicy()).spec).toEqual({
      podSelector: WARDEN_PODS,
      policyTypes: ["Ingress", "Egress"],
    });
  });

  describeK8s("with a kubeconfig whose user may manage Pods but not NetworkPolicies", () => {
    const namespace = TEST_NAMESPACE;
    let limitedUser: LimitedKubeconfig;
    let dir: string;
    let kubeconfig: string;

    beforeAll(async () => {
      limitedUser = await limitedKubeconfig("warden-test-pods-only", [
        { apiGroups: [""], resources: ["pods", "pods/exec"], verbs: ["get", "list", "create", "delete"] },
      ]);
      ({ dir, kubeconfig } = limitedUser);
    });

    afterAll(async () => {
      await limitedUser?.remove();
    });

    it("refuses to create a sandbox, naming the rights to grant, and makes no Pod", async () => {
      const limited = connectCluster({ namespace, kubeconfig, imagePullPolicy: "Never" });
      const tenant = `${TENANT}-rbac`;
      await expect(createKubernetesSandbox({ tenant }, limited)).rejects.toThrow(
        `ensuring NetworkPolicy ${namespace}/${DENY_ALL_POLICY}: refused by the API server (403: networkpolicies.networking.k8s.io "${DENY_ALL_POLICY}" is forbidden`,
      );
      await expect(createKubernetesSandbox({ tenant }, limited)).rejects.toThrow(
        "give the kubeconfig's user get, create and update on networkpolicies (API group networking.k8s.io) in the namespace",
      );
      expect(await podLeftovers(tenant)).toEqual([]);
    });

    it("keeps `warden serve` from starting, naming the NetworkPolicy and the rights", async () => {
      const main = await bundleCli();
      try {
        const config = await writeServeConfig(dir, `${TENANT}-serve`, "key", {
          server: { backend: { kind: "kubernetes", namespace, kubeconfig, imagePullPolicy: "Never" } },
        });
        const failed = await spawnServe(main, config).then(
          () => "started",
          (err: Error) => err.message,
        );
        expect(failed).toContain("warden serve exited (2):\nwarden: SANDBOX_ERROR: ");
        expect(failed).toContain(
          `ensuring NetworkPolicy ${namespace}/${DENY_ALL_POLICY}: refused by the API server (403`,
        );
      } finally {
        await rm(dirname(main), { recursive: true, force: true });
      }
    });
  });
});
