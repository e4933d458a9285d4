/**
 * Before the k8s suites: the test namespace exists, and the sandbox image is imported into the
 * node's containerd (scripts/k8s-load-image.sh; $WARDEN_K8S_LOAD_IMAGE names another copy of it).
 * So is $WARDEN_TEST_IMAGE, when set (test/helpers/backend.ts).
 * Does nothing when the cluster is unreachable: the suites then skip or fail (test/helpers/k8s.ts).
 * After them: the replica Leases left by servers the suites killed with SIGKILL are deleted (a real
 * replica keeps its Lease across kill -9 on purpose, to take it back at restart).
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { CoordinationV1Api, CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { probeCluster, TEST_KUBECONFIG, TEST_NAMESPACE } from "../helpers/k8s.js";

export default async function setup(): Promise<(() => Promise<void>) | undefined> {
  if (await probeCluster()) return undefined;
  const config = new KubeConfig();
  config.loadFromFile(TEST_KUBECONFIG);
  const core = config.makeApiClient(CoreV1Api);
  await core
    .createNamespace({ body: { metadata: { name: TEST_NAMESPACE } } })
    .catch((err: { code?: number }) => {
      if (err.code !== 409) throw err;
    });
  const script = process.env.WARDEN_K8S_LOAD_IMAGE ?? "scripts/k8s-load-image.sh";
  if (!existsSync(script))
    throw new Error(`${script} is missing: it imports warden-sandbox:latest into the node`);
  execFileSync("bash", [script, "warden-sandbox:latest"], { stdio: "inherit" });
  // A private build the backend helpers use instead (test/helpers/backend.ts TEST_IMAGE).
  const testImage = process.env.WARDEN_TEST_IMAGE;
  if (testImage) execFileSync("bash", [script, testImage], { stdio: "inherit" });
  return async () => {
    const leases = config.makeApiClient(CoordinationV1Api);
    const { items } = await leases.listNamespacedLease({ namespace: TEST_NAMESPACE });
    for (const lease of items) {
      const name = lease.metadata?.name ?? "";
      if (name.startsWith("warden-replica-"))
        await leases.deleteNamespacedLease({ name, namespace: TEST_NAMESPACE });
    }
  };
}
