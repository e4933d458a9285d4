/**
 * The RBAC rights docs/kubernetes.md lists for the Kubernetes backend are enough, and the one the channel
 * needs is named when it is missing: a ServiceAccount with get, list, create, delete on `pods`,
 * create and get on `pods/exec` (no `pods/attach`) and get, create, update on NetworkPolicies runs
 * a session; without `pods/exec` the create fails naming it, and leaves no Pod.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { connectCluster, createKubernetesSandbox } from "../../src/sandbox/index.js";
import { describeK8s, podLeftovers, TEST_NAMESPACE } from "../helpers/k8s.js";
import { type LimitedKubeconfig, limitedKubeconfig } from "../helpers/k8s-rbac.js";
import { run } from "../helpers/sandbox-fixture.js";

const TENANT = `test-k8s-rbac-${process.pid}`;
// docs/kubernetes.md's rights on pods: `patch` sets a claimed spare's expiry and a Pod's helper-copy annotation.
const PODS = { apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "create", "delete", "patch"] };
const POLICIES = {
  apiGroups: ["networking.k8s.io"],
  resources: ["networkpolicies"],
  verbs: ["get", "create", "update"],
};

describeK8s("Kubernetes backend: the RBAC rights it needs", () => {
  const users: LimitedKubeconfig[] = [];
  let documented: LimitedKubeconfig;
  let noExec: LimitedKubeconfig;

  beforeAll(async () => {
    documented = await limitedKubeconfig("warden-test-documented", [
      PODS,
      { apiGroups: [""], resources: ["pods/exec"], verbs: ["create", "get"] },
      POLICIES,
    ]);
    users.push(documented);
    noExec = await limitedKubeconfig("warden-test-no-exec", [PODS, POLICIES]);
    users.push(noExec);
  });

  afterAll(async () => {
    for (const user of users) await user.remove();
    expect(await podLeftovers(TENANT)).toEqual([]);
  });

  it("docs/kubernetes.md's rights run a session: pods, pods/exec and NetworkPolicies, no pods/attach", async () => {
    const cluster = connectCluster({
      namespace: TEST_NAMESPACE,
      kubeconfig: documented.kubeconfig,
      imagePullPolicy: "Never",
    });
    const sandbox = await createKubernetesSandbox({ tenant: TENANT }, cluster);
    try {
      expect(await run(sandbox, "echo served")).toMatchObject({ exitCode: 0, stdout: "served\n" });
    } finally {
      await sandbox.destroy();
    }
  });

  it("without pods/exec the create fails naming it, and leaves no Pod", async () => {
    const cluster = connectCluster({
      namespace: TEST_NAMESPACE,
      kubeconfig: noExec.kubeconfig,
      imagePullPolicy: "Never",
    });
    await expect(createKubernetesSandbox({ tenant: TENANT }, cluster)).rejects.toThrow(
      new RegExp(
        `^starting the channel in Pod ${TEST_NAMESPACE}/warden-[0-9a-f-]+ failed: .*403.*; check that the Pod runs and that the kubeconfig's user may create pods/exec\\.$`,
      ),
    );
    expect(await podLeftovers(TENANT)).toEqual([]);
  });
});
