/**
 * The RBAC rights of the shipped Role (deploy/kubernetes/rbac.yaml, which docs/kubernetes.md lists)
 * are enough for a sandbox, and the one the channel needs is named when it is missing: a
 * ServiceAccount with the Role's rules (get, list, create, delete, patch on `pods`, create and get on
 * `pods/exec`, no `pods/attach`, get, create, update on NetworkPolicies; the Leases rule is warden
 * serve's, test/k8s/docs-walkthrough.test.ts) runs a session; without `pods/exec` the create fails
 * naming it, and leaves no Pod.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { V1PolicyRule } from "@kubernetes/client-node";
import { afterAll, beforeAll, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { connectCluster, createKubernetesSandbox } from "../../src/sandbox/kubernetes/index.js";
import { TEST_IMAGE } from "../helpers/backend.js";
import { REPO_ROOT } from "../helpers/doc-snippets.js";
import { describeK8s, podLeftovers, TEST_NAMESPACE } from "../helpers/k8s.js";
import { type LimitedKubeconfig, limitedKubeconfig } from "../helpers/k8s-rbac.js";
import { run } from "../helpers/sandbox-fixture.js";

const TENANT = `test-k8s-rbac-${process.pid}`;
/** The rules of the Role in deploy/kubernetes/rbac.yaml. */
const ROLE_RULES =
  parseAllDocuments(readFileSync(join(REPO_ROOT, "deploy/kubernetes/rbac.yaml"), "utf8"))
    .map((d) => d.toJSON() as { kind: string; rules?: V1PolicyRule[] })
    .find((d) => d.kind === "Role")?.rules ?? [];

describeK8s("Kubernetes backend: the RBAC rights it needs", () => {
  const users: LimitedKubeconfig[] = [];
  let documented: LimitedKubeconfig;
  let noExec: LimitedKubeconfig;

  beforeAll(async () => {
    expect(ROLE_RULES.map((r) => r.resources?.join())).toEqual([
      "pods",
      "pods/exec",
      "networkpolicies",
      "leases",
    ]);
    documented = await limitedKubeconfig("warden-test-documented", ROLE_RULES);
    users.push(documented);
    noExec = await limitedKubeconfig(
      "warden-test-no-exec",
      ROLE_RULES.filter((r) => !r.resources?.includes("pods/exec")),
    );
    users.push(noExec);
  });

  afterAll(async () => {
    for (const user of users) await user.remove();
    expect(await podLeftovers(TENANT)).toEqual([]);
  });

  it("the shipped Role's rights run a session: pods, pods/exec and NetworkPolicies, no pods/attach", async () => {
    const cluster = connectCluster({
      namespace: TEST_NAMESPACE,
      kubeconfig: documented.kubeconfig,
      imagePullPolicy: "Never",
    });
    const sandbox = await createKubernetesSandbox(
      { tenant: TENANT, ...(TEST_IMAGE ? { image: TEST_IMAGE } : {}) },
      cluster,
    );
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
    await expect(
      createKubernetesSandbox({ tenant: TENANT, ...(TEST_IMAGE ? { image: TEST_IMAGE } : {}) }, cluster),
    ).rejects.toThrow(
      new RegExp(
        `^starting the channel in Pod ${TEST_NAMESPACE}/warden-[0-9a-f-]+ failed: .*403.*; check that the Pod runs and that the kubeconfig's user may create pods/exec\\.$`,
      ),
    );
    expect(await podLeftovers(TENANT)).toEqual([]);
  });
});
