/**
 * Kubernetes test gate and fixtures. The cluster is the one scripts/ensure-k8s.sh runs (its admin
 * kubeconfig; see TEST_KUBECONFIG). Without a reachable API server the suites are skipped
 * with a visible message locally and FAIL under CI=true (a beforeAll that throws the reason).
 * Sessions go to the `warden-test` namespace with `imagePullPolicy: Never` (test/k8s/global-setup.ts
 * imports the sandbox image into the node first).
 */
import { existsSync } from "node:fs";
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { beforeAll, describe } from "vitest";
import {
  connectCluster,
  createKubernetesSandbox,
  type KubernetesCluster,
  type Sandbox,
  type SandboxOptions,
  WARDEN_POD_SELECTOR,
} from "../../src/sandbox/index.js";

/** The kubeconfig the suites use: $WARDEN_TEST_KUBECONFIG, $KUBECONFIG (what .ci/run exports), or the local cluster's. */
export const TEST_KUBECONFIG =
  process.env.WARDEN_TEST_KUBECONFIG ?? process.env.KUBECONFIG ?? "/var/lib/warden-k8s/admin.kubeconfig";

/** The namespace of every test Pod. */
export const TEST_NAMESPACE = "warden-test";

/** Why the cluster cannot be used, or null when its API server answers. */
export async function probeCluster(): Promise<string | null> {
  if (!existsSync(TEST_KUBECONFIG)) return `no kubeconfig at ${TEST_KUBECONFIG}`;
  try {
    const config = new KubeConfig();
    config.loadFromFile(TEST_KUBECONFIG);
    await config.makeApiClient(CoreV1Api).listNamespace({ limit: 1 });
    return null;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

const unreachable = await probeCluster();
const inCI = process.env.CI === "true" || process.env.CI === "1";

if (unreachable && !inCI) {
  console.warn(
    `[warden] Kubernetes cluster unreachable (${unreachable}): k8s tests SKIPPED. Run 'bash scripts/ensure-k8s.sh'.`,
  );
}

/** `describe` for cluster tests: runs with a cluster, skips visibly without one, fails in CI without one. */
export function describeK8s(name: string, body: () => void): void {
  if (unreachable && !inCI) {
    describe.skip(name, body);
    return;
  }
  describe(name, () => {
    beforeAll(() => {
      if (unreachable)
        throw new Error(
          `Kubernetes cluster unreachable under CI (${unreachable}); run scripts/ensure-k8s.sh`,
        );
    });
    body();
  });
}

/** The test cluster: namespace warden-test, images imported into the node (pull policy Never). */
export function testCluster(): KubernetesCluster {
  return connectCluster({
    namespace: TEST_NAMESPACE,
    kubeconfig: TEST_KUBECONFIG,
    imagePullPolicy: "Never",
    startTimeoutMs: 90_000,
  });
}

/** The warden Pods of `tenant` in the test namespace (terminating ones included), with their state. */
export async function tenantPods(
  tenant: string,
): Promise<{ id: string; session: string; controller: string; poolKey?: string }[]> {
  const { core } = testCluster();
  const list = await core.listNamespacedPod({
    namespace: TEST_NAMESPACE,
    labelSelector: `${WARDEN_POD_SELECTOR},io.warden.tenant=${tenant}`,
  });
  return list.items.map((p) => {
    const notes = p.metadata?.annotations ?? {};
    return {
      id: p.metadata?.name ?? "",
      session: notes["io.warden.session"] ?? "",
      controller: notes["io.warden.controller"] ?? "",
      ...(notes["io.warden.pool"] ? { poolKey: notes["io.warden.pool"] } : {}),
    };
  });
}

/** Names of the warden Pods of `tenant` still in the test namespace (terminating ones included). */
export async function podLeftovers(tenant: string): Promise<string[]> {
  return (await tenantPods(tenant)).map((p) => `pod ${p.id}`);
}

/** A Kubernetes sandbox on the test cluster (the backend parameter's createSandbox). */
export function createTestPodSandbox(options: SandboxOptions): Promise<Sandbox> {
  return createKubernetesSandbox(options, testCluster());
}

/** Deletes (no grace) every warden Pod of `tenant` in the test namespace. */
export async function removePods(tenant: string): Promise<void> {
  const { core } = testCluster();
  for (const pod of await podLeftovers(tenant))
    await core
      .deleteNamespacedPod({ name: pod.slice(4), namespace: TEST_NAMESPACE, gracePeriodSeconds: 0 })
      .catch(() => undefined);
}
