import { describe, expect, it } from "vitest";
import { DEFAULT_LIMITS } from "../../../../src/sandbox/index.js";
import {
  buildPodSpec,
  cpuQuantity,
  MANAGED_BY,
  type PodSpecOptions,
  podUidOf,
} from "../../../../src/sandbox/kubernetes/index.js";

const createdAt = new Date("2026-12-01T10:00:00.000Z");
const expiresAt = new Date("2026-12-02T10:00:00.000Z");
const MiB = 1024 * 1024;

function options(over: Partial<PodSpecOptions> = {}): PodSpecOptions {
  return {
    name: "warden-s1-0a1b2c3d",
    namespace: "warden-test",
    image: "warden-sandbox:latest",
    limits: { memoryBytes: 512 * MiB, cpus: 1.5, pids: 128, tmpBytes: 64 * MiB, workspaceBytes: 256 * MiB },
    state: { sessionId: "s1", tenant: "acme", controller: "serve@host-1", createdAt, expiresAt },
    uid: 2000003,
    ...over,
  };
}

describe("buildPodSpec", () => {
  const pod = buildPodSpec(options());
  const spec = pod.spec!;
  const container = spec.containers[0]!;

  it("names the Pod in its namespace, never restarts it and lets it go without grace", () => {
    expect(pod.metadata?.name).toBe("warden-s1-0a1b2c3d");
    expect(pod.metadata?.namespace).toBe("warden-test");
    expect(spec.restartPolicy).toBe("Never");
    expect(spec.terminationGracePeriodSeconds).toBe(0);
  });

  it("mounts no service-account token, injects no service links, shares no host namespace", () => {
    expect(spec.automountServiceAccountToken).toBe(false);
    expect(spec.enableServiceLinks).toBe(false);
    expect([spec.hostNetwork, spec.hostPID, spec.hostIPC]).toEqual([false, false, false]);
  });

  it("runs as the sandbox's own uid = gid = fsGroup, non-root, under seccomp RuntimeDefault at Pod and container level", () => {
    expect(spec.securityContext).toEqual({
      runAsNonRoot: true,
      runAsUser: 2000003,
      runAsGroup: 2000003,
      fsGroup: 2000003,
      seccompProfile: { type: "RuntimeDefault" },
    });
    expect(container.securityContext).toEqual({
      runAsNonRoot: true,
      runAsUser: 2000003,
      runAsGroup: 2000003,
      privileged: false,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ["ALL"] },
      seccompProfile: { type: "RuntimeDefault" },
    });
  });

  it("records its uid in a label and an annotation, reads it back for adoption, and refuses uid 0", () => {
    expect(pod.metadata?.labels?.["io.warden.uid"]).toBe("2000003");
    expect(pod.metadata?.annotations?.["io.warden.uid"]).toBe("2000003");
    expect(podUidOf(pod)).toBe(2000003);
    expect(() => buildPodSpec(options({ uid: 0 }))).toThrow(
      "a sandbox's uid must be a positive integer (never root), got 0.",
    );
    expect(() => podUidOf({ metadata: { name: "p" }, spec: { containers: [] } })).toThrow(
      "Pod p has no non-root sandbox uid (got null)",
    );
  });

  it("runs warden-helper's idle init as the container's process, with no stdin (nothing to attach) and no TTY", () => {
    expect(spec.containers).toHaveLength(1);
    expect(container.name).toBe("sandbox");
    expect(container.command).toEqual(["/usr/local/bin/warden-helper", "--init"]);
    expect(container.args).toEqual([]);
    expect([container.stdin, container.stdinOnce, container.tty]).toEqual([false, undefined, false]);
    expect(container.workingDir).toBe("/workspace");
  });

  it("puts the termination message file in the image's root-only directory, not /dev/termination-log", () => {
    expect([container.terminationMessagePath, container.terminationMessagePolicy]).toEqual([
      "/var/lib/warden/termination/log",
      "File",
    ]);
  });

  it("gives the environment LANG/PATH/HOME only", () => {
    expect(container.env).toEqual([
      { name: "LANG", value: "C.UTF-8" },
      { name: "PATH", value: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" },
      { name: "HOME", value: "/home/sandbox" },
    ]);
  });

  it("limits CPU in millicores and memory to memory + 2 × tmp (/tmp, HOME) + workspace + 1 MiB (tmpfs is charged to the Pod)", () => {
    expect(container.resources?.limits).toEqual({
      cpu: "1500m",
      memory: String(512 * MiB + 2 * 64 * MiB + 256 * MiB + MiB),
    });
    expect(container.resources?.requests).toEqual({ cpu: "10m", memory: String(32 * MiB) });
  });

  it("backs /workspace, /tmp and HOME with size-limited memory emptyDirs and mounts nothing else", () => {
    expect(spec.volumes).toEqual([
      { name: "workspace", emptyDir: { medium: "Memory", sizeLimit: String(256 * MiB) } },
      { name: "tmp", emptyDir: { medium: "Memory", sizeLimit: String(64 * MiB) } },
      { name: "home", emptyDir: { medium: "Memory", sizeLimit: String(64 * MiB) } },
    ]);
    expect(container.volumeMounts).toEqual([
      { name: "workspace", mountPath: "/workspace" },
      { name: "tmp", mountPath: "/tmp" },
      { name: "home", mountPath: "/home/sandbox" },
    ]);
  });

  it("labels the session, tenant and manager, and annotates the full state and the pids limit", () => {
    expect(pod.metadata?.labels).toEqual({
      [MANAGED_BY.key]: "warden",
      "io.warden.session": "s1",
      "io.warden.tenant": "acme",
      "io.warden.uid": "2000003",
    });
    expect(pod.metadata?.annotations).toEqual({
      "io.warden.session": "s1",
      "io.warden.tenant": "acme",
      "io.warden.created": "2026-12-01T10:00:00.000Z",
      "io.warden.expires": "2026-12-02T10:00:00.000Z",
      "io.warden.controller": "serve@host-1",
      "io.warden.pids": "128",
      "io.warden.uid": "2000003",
    });
  });

  it("sets the RuntimeClass and pull policy only when given (default IfNotPresent)", () => {
    expect(spec.runtimeClassName).toBeUndefined();
    expect(container.imagePullPolicy).toBe("IfNotPresent");
    const gvisor = buildPodSpec(options({ runtimeClassName: "gvisor", imagePullPolicy: "Never" }));
    expect(gvisor.spec?.runtimeClassName).toBe("gvisor");
    expect(gvisor.spec?.containers[0]?.imagePullPolicy).toBe("Never");
  });

  it("marks a pool spare with its key's digest as label and the whole key as annotation", () => {
    const key = `sha256:${"ab".repeat(32)}`;
    const spare = buildPodSpec(options({ state: { ...options().state, poolKey: key } }));
    expect(spare.metadata?.labels?.["io.warden.pool"]).toBe("ab".repeat(32).slice(0, 63));
    expect(spare.metadata?.annotations?.["io.warden.pool"]).toBe(key);
  });

  it("refuses a tenant that is no Kubernetes label value, naming it", () => {
    expect(() => buildPodSpec(options({ state: { ...options().state, tenant: "acme-" } }))).toThrow(
      'tenant "acme-" cannot be a Kubernetes label value',
    );
  });

  it("uses the default limits' values as given (1 CPU → 1000m)", () => {
    expect(cpuQuantity(DEFAULT_LIMITS.cpus)).toBe("1000m");
    expect(cpuQuantity(0.01)).toBe("10m");
  });
});
