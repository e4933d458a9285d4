/**
 * Kubernetes test gate and fixtures. The cluster is the one scripts/ensure-k8s.sh runs (its admin
 * kubeconfig; see TEST_KUBECONFIG). Without a reachable API server the suites are skipped
 * with a visible message locally and FAIL under CI=true (a beforeAll that throws the reason).
 * Sessions go to the `warden-test` namespace with `imagePullPolicy: Never` (test/k8s/global-setup.ts
 * imports the sandbox image into the node first).
 */
import { existsSync } from "node:fs";
import { CoreV1Api, KubeConfig, NodeV1Api } from "@kubernetes/client-node";
import { beforeAll, describe } from "vitest";
import {
  connectCluster,
  createKubernetesSandbox,
  type KubernetesCluster,
  type KubernetesClusterOptions,
  loadKubernetesClient,
  type Sandbox,
  type SandboxOptions,
  WARDEN_POD_SELECTOR,
} from "../../src/sandbox/index.js";
import { run } from "./sandbox-fixture.js";

// The API client is loaded on demand (src/sandbox/kubernetes/client.ts); every suite here uses it.
await loadKubernetesClient();

/** The kubeconfig the suites use: $WARDEN_TEST_KUBECONFIG, $KUBECONFIG (what .ci/run exports), or the local cluster's. */
export const TEST_KUBECONFIG =
  process.env.WARDEN_TEST_KUBECONFIG ?? process.env.KUBECONFIG ?? "/var/lib/warden-k8s/admin.kubeconfig";

/**
 * The namespace of every test Pod: $WARDEN_TEST_NAMESPACE (so that two checkouts can run the suites
 * on one cluster at once), else warden-test.
 */
export const TEST_NAMESPACE = process.env.WARDEN_TEST_NAMESPACE ?? "warden-test";

/** The `backend:` of a `warden serve` config on the test cluster: its namespace and kubeconfig, images imported (Never). */
export const TEST_SERVE_BACKEND = {
  kind: "kubernetes",
  namespace: TEST_NAMESPACE,
  kubeconfig: TEST_KUBECONFIG,
  imagePullPolicy: "Never",
} as const;

/** The kubeconfig of this project's own cluster (scripts/ensure-k8s.sh), which offers RuntimeClass gvisor. */
export const OWN_KUBECONFIG = "/var/lib/warden-k8s/admin.kubeconfig";

/**
 * The RuntimeClass of every test Pod: $WARDEN_TEST_RUNTIME_CLASS (`npm run test:k8s:gvisor` sets
 * `gvisor`), else none (the node's default runtime).
 */
export const TEST_RUNTIME_CLASS = process.env.WARDEN_TEST_RUNTIME_CLASS || undefined;

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

/** Why RuntimeClass `name` cannot be used on the test cluster, or null when it exists. */
export async function missingRuntimeClass(name: string): Promise<string | null> {
  const config = new KubeConfig();
  config.loadFromFile(TEST_KUBECONFIG);
  try {
    await config.makeApiClient(NodeV1Api).readRuntimeClass({ name });
    return null;
  } catch (err) {
    if ((err as { code?: number }).code === 404)
      return `the cluster has no RuntimeClass ${name} (scripts/ensure-k8s.sh makes gvisor where runsc runs)`;
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

// Why the cluster cannot run Pods on each RuntimeClass the suites name (null: it can).
const runtimeClassGaps = new Map<string, string | null>();
for (const name of new Set(["gvisor", TEST_RUNTIME_CLASS])) {
  if (name && !unreachable) runtimeClassGaps.set(name, await missingRuntimeClass(name));
}

/**
 * `describe` for cluster tests: runs with a cluster, skips visibly without one, fails in CI without
 * one. With `runtimeClass` (gvisor, or the run's $WARDEN_TEST_RUNTIME_CLASS) the cluster must also
 * offer it: without it the suite fails under CI on this project's own cluster (ensure-k8s.sh makes
 * gvisor wherever runsc runs), and elsewhere is skipped with the reason in its title.
 */
export function describeK8sOn(runtimeClass: string | undefined, name: string, body: () => void): void {
  if (unreachable && !inCI) {
    describe.skip(name, body);
    return;
  }
  const missing = runtimeClass ? (runtimeClassGaps.get(runtimeClass) ?? null) : null;
  if (missing && !(inCI && TEST_KUBECONFIG === OWN_KUBECONFIG)) {
    describe.skip(`${name} [skipped: ${missing}]`, body);
    return;
  }
  describe(name, () => {
    beforeAll(() => {
      if (unreachable)
        throw new Error(
          `Kubernetes cluster unreachable under CI (${unreachable}); run scripts/ensure-k8s.sh`,
        );
      if (missing) throw new Error(`${missing}; under CI this project's own cluster must offer it`);
    });
    body();
  });
}

/** describeK8sOn the run's RuntimeClass ($WARDEN_TEST_RUNTIME_CLASS; none: the node's default). */
export function describeK8s(name: string, body: () => void): void {
  describeK8sOn(TEST_RUNTIME_CLASS, name, body);
}

/**
 * The test cluster: namespace warden-test, images imported into the node (pull policy Never),
 * Pods on `runtimeClassName` (default: the run's, $WARDEN_TEST_RUNTIME_CLASS); `overrides` change
 * any other connection option (another kubeconfig, the heartbeat).
 */
export function testCluster(
  runtimeClassName = TEST_RUNTIME_CLASS,
  overrides: Partial<KubernetesClusterOptions> = {},
): KubernetesCluster {
  return connectCluster({
    namespace: TEST_NAMESPACE,
    kubeconfig: TEST_KUBECONFIG,
    imagePullPolicy: "Never",
    startTimeoutMs: 90_000,
    ...(runtimeClassName ? { runtimeClassName } : {}),
    ...overrides,
  });
}

/**
 * The warden Pods of `tenant` in `namespace` (default the test namespace; terminating ones
 * included), with their state.
 */
export async function tenantPods(
  tenant: string,
  namespace = TEST_NAMESPACE,
): Promise<{ id: string; session: string; controller: string; poolKey?: string }[]> {
  const { core } = testCluster();
  const list = await core.listNamespacedPod({
    namespace,
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

/** Names of the warden Pods of `tenant` still in `namespace` (default the test namespace; terminating ones included). */
export async function podLeftovers(tenant: string, namespace = TEST_NAMESPACE): Promise<string[]> {
  return (await tenantPods(tenant, namespace)).map((p) => `pod ${p.id}`);
}

/** A Kubernetes sandbox on the test cluster (the backend parameter's createSandbox). */
export function createTestPodSandbox(options: SandboxOptions): Promise<Sandbox> {
  return createKubernetesSandbox(options, testCluster());
}

/** Deletes (no grace) every warden Pod of `tenant` in `namespace` (default the test namespace). */
export async function removePods(tenant: string, namespace = TEST_NAMESPACE): Promise<void> {
  const { core } = testCluster();
  for (const pod of await podLeftovers(tenant, namespace))
    await core
      .deleteNamespacedPod({ name: pod.slice(4), namespace, gracePeriodSeconds: 0 })
      .catch(() => undefined);
}

/** The sizes in bytes of a Pod sandbox's /workspace, /tmp and HOME emptyDirs (df), in that order. */
export async function emptyDirSizes(sandbox: Sandbox): Promise<number[]> {
  const r = await run(sandbox, "df -B1 --output=size /workspace /tmp /home/sandbox | tail -n 3");
  return r.stdout
    .trim()
    .split("\n")
    .map((l) => Number(l.trim()));
}
