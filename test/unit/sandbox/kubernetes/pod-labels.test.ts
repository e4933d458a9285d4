import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { NoRoomError } from "../../../../src/errors.js";
import {
  DEFAULT_LIMITS,
  type ResolvedSandboxOptions,
  resolveSandboxOptions,
} from "../../../../src/sandbox/index.js";
import {
  isLabelValue,
  type KubernetesCluster,
  podAnnotations,
  podLabels,
  podName,
  podProgress,
  podStateOf,
  replicaSelector,
  requirePodOptions,
  startTimeoutError,
} from "../../../../src/sandbox/kubernetes/index.js";

const state = {
  sessionId: "0f6c1f7e-5a4b-4c1d-9e7a-1b2c3d4e5f60",
  tenant: "acme",
  controller: "serve@host:1",
  createdAt: new Date("2026-12-01T10:00:00.000Z"),
  expiresAt: new Date("2026-12-01T11:00:00.000Z"),
  poolKey: `sha256:${"c".repeat(64)}`,
};

describe("Pod labels and annotations", () => {
  it("round-trips the session state through the Pod's metadata", () => {
    const metadata = { labels: podLabels(state), annotations: podAnnotations(state, DEFAULT_LIMITS) };
    expect(podStateOf(metadata)).toEqual(state);
  });

  it("labels a server's Pod with its replica, which is read back and selected on", () => {
    const owned = { ...state, replica: "warden-0" };
    const labels = podLabels(owned);
    expect(labels["io.warden.replica"]).toBe("warden-0");
    expect(podStateOf({ labels, annotations: podAnnotations(owned, DEFAULT_LIMITS) })).toEqual(owned);
    expect(podLabels(state)["io.warden.replica"]).toBeUndefined();
    expect(replicaSelector("warden-0")).toBe(
      "app.kubernetes.io/managed-by=warden,io.warden.replica=warden-0",
    );
    expect(() => replicaSelector("a,b")).toThrow('replicaId "a,b" cannot be a Kubernetes label value');
    expect(() => podLabels({ ...state, replica: "x=y" })).toThrow('replicaId "x=y"');
  });

  it("reads no state from a Pod warden did not make", () => {
    expect(podStateOf({ labels: { "io.warden.session": "x", "io.warden.tenant": "t" } })).toBeNull();
    expect(podStateOf({})).toBeNull();
  });

  it("checks label values as Kubernetes does: 63 characters, alphanumeric at both ends", () => {
    expect(isLabelValue("a".repeat(63))).toBe(true);
    expect(isLabelValue("a".repeat(64))).toBe(false);
    expect(isLabelValue("serve@host")).toBe(false);
    expect(isLabelValue("-a")).toBe(false);
    expect(isLabelValue("a_b.c-d")).toBe(true);
  });

  it("makes DNS-label Pod names from any session id, unique per call", () => {
    const a = podName("Pool-ABC_def:1@x");
    expect(a).toMatch(/^warden-pool-abc-def-1-x-[0-9a-f]{8}$/);
    expect(podName("s")).not.toBe(podName("s"));
    expect(podName("x".repeat(128)).length).toBeLessThanOrEqual(63);
  });
});

describe("podProgress", () => {
  it("is running once the container runs", () => {
    expect(podProgress({ status: { phase: "Running", containerStatuses: [runningStatus()] } })).toEqual({
      kind: "running",
    });
  });

  it("fails at once on an image the node cannot get, with the kubelet's reason", () => {
    const waiting = { reason: "ErrImageNeverPull", message: 'image "x:1" is not present' };
    expect(
      podProgress({
        status: { phase: "Pending", containerStatuses: [{ ...runningStatus(), state: { waiting } }] },
      }),
    ).toEqual({ kind: "failed", detail: 'ErrImageNeverPull: image "x:1" is not present' });
  });

  it("fails on a terminated Pod with its exit code", () => {
    const terminated = { exitCode: 2, reason: "Error" };
    expect(
      podProgress({
        status: { phase: "Failed", containerStatuses: [{ ...runningStatus(), state: { terminated } }] },
      }),
    ).toEqual({ kind: "failed", detail: "phase Failed: exit 2 (Error)" });
  });

  it("is still starting while unscheduled, saying why", () => {
    expect(
      podProgress({
        status: {
          phase: "Pending",
          conditions: [{ type: "PodScheduled", status: "False", message: "0/1 nodes are available" }],
        },
      }),
    ).toEqual({ kind: "starting", detail: "0/1 nodes are available", unscheduled: true });
  });

  it("is starting, not unscheduled, while the container waits on a scheduled Pod", () => {
    const waiting = { reason: "ContainerCreating" };
    expect(
      podProgress({
        status: { phase: "Pending", containerStatuses: [{ ...runningStatus(), state: { waiting } }] },
      }),
    ).toEqual({ kind: "starting", detail: "ContainerCreating" });
  });
});

describe("startTimeoutError", () => {
  it("names a full node by the scheduler's words and what frees room, not a longer timeout alone", () => {
    // The scheduler's message as the bench's 201st Pod on the 2-CPU test node got it (2026-12-02).
    const full =
      "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.";
    const err = startTimeoutError("ns", "warden-x", 90_000, { detail: full, unscheduled: true });
    expect([err instanceof NoRoomError, err.code]).toEqual([true, "NO_ROOM"]);
    expect(err.message).toBe(
      `Pod ns/warden-x was not scheduled within 90000 ms: no node takes it (the scheduler: "${full}"). Free room on a node (end sessions or warm pool spares: each sandbox Pod requests 10m CPU and 32 MiB of memory, and a node runs at most its maxPods Pods) or add nodes; backend.startTimeoutMs is how long a create waits for room.`,
    );
  });

  it("names the container's waiting reason on a scheduled Pod", () => {
    expect(startTimeoutError("ns", "warden-x", 5000, { detail: "ContainerCreating" }).message).toBe(
      "Pod ns/warden-x did not run within 5000 ms (still ContainerCreating); check the node (kubectl describe pod) or raise backend.startTimeoutMs.",
    );
  });
});

function runningStatus() {
  return {
    name: "sandbox",
    image: "warden-sandbox:latest",
    imageID: "",
    ready: true,
    restartCount: 0,
    state: { running: { startedAt: new Date() } },
  };
}

describe("requirePodOptions", () => {
  const cluster = { namespace: "n" } as KubernetesCluster;

  it("refuses extra mounts, network egress and runsc without a RuntimeClass, naming the fix", async () => {
    const opts = await resolveSandboxOptions({}, "s1");
    expect(() => requirePodOptions(opts, cluster)).not.toThrow();
    expect(() =>
      requirePodOptions({ ...opts, mounts: [{ hostPath: tmpdir(), containerPath: "/data" }] }, cluster),
    ).toThrow("mounts bind host directories, which a Kubernetes sandbox cannot; drop them.");
    expect(() =>
      requirePodOptions(
        { ...opts, network: { mode: "allowlist" } as ResolvedSandboxOptions["network"] },
        cluster,
      ),
    ).toThrow(
      'network mode "allowlist" is not available on the Kubernetes backend yet; use { mode: "none" }.',
    );
    expect(() => requirePodOptions({ ...opts, runtime: "runsc" }, cluster)).toThrow(
      "backend.runtimeClassName",
    );
    expect(() =>
      requirePodOptions({ ...opts, runtime: "runsc" }, { ...cluster, runtimeClassName: "gvisor" }),
    ).not.toThrow();
  });
});
