/**
 * The backend parameter of the engine suites that run on both backends: Docker (default) or
 * Kubernetes ($WARDEN_TEST_BACKEND=kubernetes, set by `npm run test:k8s`, vitest.k8s.config.ts).
 * The same test bodies create, stop and count their sandboxes through these helpers.
 */
import {
  createSandbox,
  deletePod,
  getDocker,
  type Sandbox,
  type SandboxOptions,
} from "../../src/sandbox/index.js";
import { describeEngine } from "./engine.js";
import { leftovers } from "./sandbox-fixture.js";

/** Which backend this run tests. */
export const TEST_BACKEND: "docker" | "kubernetes" =
  process.env.WARDEN_TEST_BACKEND === "kubernetes" ? "kubernetes" : "docker";

// Only a Kubernetes run probes the cluster (and warns when it is missing).
const k8s = TEST_BACKEND === "kubernetes" ? await import("./k8s.js") : undefined;

/** `describe` gated on the backend under test: describeEngine, or describeK8s. */
export const describeBackend: (name: string, body: () => void) => void = k8s
  ? k8s.describeK8s
  : describeEngine;

/** A sandbox on the backend under test. */
export function createTestSandbox(options: SandboxOptions): Promise<Sandbox> {
  return k8s ? k8s.createTestPodSandbox(options) : createSandbox(options);
}

/** What the backend still holds for `tenant` (containers and volumes, or Pods). */
export function backendLeftovers(tenant: string): Promise<string[]> {
  return k8s ? k8s.podLeftovers(tenant) : leftovers(tenant);
}

/** Stops the sandbox's container (Docker) or deletes its Pod (Kubernetes) behind the sandbox's back. */
export async function killSandboxBehindItsBack(sandbox: Sandbox): Promise<void> {
  if (k8s) await deletePod(k8s.testCluster(), sandbox.info.containerId);
  else await getDocker().getContainer(sandbox.info.containerId).stop({ t: 0 });
}
