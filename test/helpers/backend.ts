/**
 * The backend parameter of the engine suites that run on both backends: Docker (default) or
 * Kubernetes ($WARDEN_TEST_BACKEND=kubernetes, set by `npm run test:k8s`, vitest.k8s.config.ts).
 * The same test bodies create, stop and count their sandboxes, sessions and servers through these
 * helpers; a test that is Docker's by nature is declared with itDocker and its reason.
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { it } from "vitest";
import type { SandboxBackend } from "../../src/sandbox/backend.js";
import { openSandboxBackend } from "../../src/sandbox/backends.js";
import { createSandbox, getDocker, type Sandbox, type SandboxOptions } from "../../src/sandbox/index.js";
import { deletePod } from "../../src/sandbox/kubernetes/index.js";
import {
  createSession,
  createSpillStore,
  openSession,
  type Session,
  type SessionOptions,
} from "../../src/session/index.js";
import { builtinTools, optInTools } from "../../src/tools/index.js";
import { describeEngine } from "./engine.js";
import { leftovers } from "./sandbox-fixture.js";
import { removeTenant, tenantContainers } from "./server-fixture.js";

/** Which backend this run tests. */
export const TEST_BACKEND: "docker" | "kubernetes" =
  process.env.WARDEN_TEST_BACKEND === "kubernetes" ? "kubernetes" : "docker";

// Only a Kubernetes run probes the cluster (and warns when it is missing).
const k8s = TEST_BACKEND === "kubernetes" ? await import("./k8s.js") : undefined;

/** `describe` gated on the backend under test: describeEngine, or describeK8s. */
export const describeBackend: (name: string, body: () => void) => void = k8s
  ? k8s.describeK8s
  : describeEngine;

/**
 * A test of what only Docker has (docker inspect, bind mounts, egress, docker exec): runs on
 * Docker; on Kubernetes it is listed as skipped with `reason` in its name, never silently.
 */
export function itDocker(reason: string, name: string, body: () => Promise<void>, timeoutMs?: number): void {
  if (k8s) it.skip(`${name} [Docker only: ${reason}]`, body);
  else it(name, body, timeoutMs);
}

/**
 * The sandbox image of createTestSandbox and createTestSession when a test names none:
 * $WARDEN_TEST_IMAGE (a privately tagged build of images/sandbox, e.g. to try a helper change
 * without rebuilding the shared warden-sandbox:latest; test/k8s/global-setup.ts imports it into
 * the node), else the default image.
 */
export const TEST_IMAGE: string | undefined = process.env.WARDEN_TEST_IMAGE || undefined;

function withTestImage<T extends { image?: string }>(options: T): T {
  return TEST_IMAGE && options.image === undefined ? { ...options, image: TEST_IMAGE } : options;
}

/**
 * The backend under test as a SandboxBackend (create, list, adopt, remove): Docker, or the test
 * cluster with its own replica id (one replica Lease per live backend). Close it after the suite.
 */
export function openTestBackend(): Promise<SandboxBackend> {
  if (!k8s) return openSandboxBackend({ kind: "docker" });
  return openSandboxBackend({
    ...k8s.TEST_SERVE_BACKEND,
    startTimeoutMs: 90_000,
    replicaId: `test-${randomUUID().slice(0, 8)}`,
    leaseHolder: `${hostname()}:${process.pid}`,
    ...(k8s.TEST_RUNTIME_CLASS ? { runtimeClassName: k8s.TEST_RUNTIME_CLASS } : {}),
  });
}

/** A sandbox on the backend under test. */
export function createTestSandbox(options: SandboxOptions): Promise<Sandbox> {
  const withImage = withTestImage(options);
  return k8s ? k8s.createTestPodSandbox(withImage) : createSandbox(withImage);
}

/** A session (sandbox, spill store, the built-in tools) on the backend under test. */
export function createTestSession(options: SessionOptions = {}): Promise<Session> {
  const withImage: SessionOptions = { ...options, sandbox: withTestImage(options.sandbox ?? {}) };
  if (!k8s) return createSession(withImage);
  return openSession(withImage, {
    createSandbox: (spec, identity, call) => k8s.createTestPodSandbox({ ...spec, ...identity, ...call }),
    createSpillStore,
    builtinTools,
    optInTools,
  });
}

/**
 * The `backend:` fields of a `warden serve` config for the backend under test: none on Docker
 * (its default), the test cluster's namespace and kubeconfig on Kubernetes.
 */
export function testServeBackend(): { backend?: Record<string, unknown> } {
  if (!k8s) return {};
  return { backend: { ...k8s.TEST_SERVE_BACKEND } };
}

/** What the backend still holds for `tenant` (containers and volumes, or Pods). */
export function backendLeftovers(tenant: string): Promise<string[]> {
  return k8s ? k8s.podLeftovers(tenant) : leftovers(tenant);
}

/** A sandbox of a tenant as the backend lists it: container id or Pod name, and its state labels. */
export interface BackendSandbox {
  id: string;
  session: string;
  controller: string;
  /** The warm pool key (a spare), if any. */
  poolKey?: string;
}

/** The tenant's sandboxes (containers in every state, or Pods, terminating ones included). */
export async function backendSandboxes(tenant: string): Promise<BackendSandbox[]> {
  if (k8s) return k8s.tenantPods(tenant);
  return (await tenantContainers(tenant)).map((c) => ({
    id: c.Id,
    session: c.Labels["io.warden.session"] ?? "",
    controller: c.Labels["io.warden.controller"] ?? "",
    ...(c.Labels["io.warden.pool"] ? { poolKey: c.Labels["io.warden.pool"] } : {}),
  }));
}

/** Force-removes whatever `tenant` left on the backend (containers and volumes, or Pods). */
export function removeBackendTenant(tenant: string): Promise<void> {
  return k8s ? k8s.removePods(tenant) : removeTenant(tenant);
}

/**
 * Stops the sandbox's container (Docker) or deletes its Pod (Kubernetes) behind the sandbox's back.
 * On Kubernetes a delete with grace 0 removes the API object at once while the kubelet kills the
 * container afterwards, so this waits (at most 30 s) until the sandbox no longer runs a command:
 * only then is the container stopped as on Docker.
 */
export async function killSandboxBehindItsBack(sandbox: Sandbox): Promise<void> {
  if (!k8s) return void (await getDocker().getContainer(sandbox.info.containerId).stop({ t: 0 }));
  await deletePod(k8s.testCluster(), sandbox.info.containerId);
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const runs = await sandbox.exec({ argv: ["true"] }).then(
      () => true,
      () => false,
    );
    if (!runs) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`Pod ${sandbox.info.containerId} still runs commands 30 s after its deletion`);
}
