/**
 * RuntimeClass gvisor: a sandbox Pod with `backend.runtimeClassName: gvisor` runs under gVisor's
 * kernel (runsc through containerd's runc shim on this project's cluster, scripts/k8s/runsc-cri.sh)
 * with warden's hardening seen from inside, the channel over the attach stream, and no network.
 * The tool suites run on gvisor Pods too: `npm run test:k8s:gvisor`.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { createKubernetesSandbox, type KubernetesSandbox } from "../../src/sandbox/kubernetes/index.js";
import { createSpillStore, openSession, type Session } from "../../src/session/index.js";
import { builtinTools } from "../../src/tools/index.js";
import { describeK8sOn, emptyDirSizes, podLeftovers, testCluster } from "../helpers/k8s.js";
import { run } from "../helpers/sandbox-fixture.js";

const TENANT = `test-k8s-gvisor-${process.pid}`;

describeK8sOn("gvisor", "Kubernetes sandbox on RuntimeClass gvisor", () => {
  const cluster = testCluster("gvisor");
  let sandbox: KubernetesSandbox;

  beforeAll(async () => {
    sandbox = await createKubernetesSandbox({ tenant: TENANT, limits: { memoryBytes: 256 << 20 } }, cluster);
  });

  afterAll(async () => {
    await sandbox?.destroy();
    expect(await podLeftovers(TENANT)).toEqual([]);
  });

  it("is a Pod of RuntimeClass gvisor whose kernel is gVisor's, and its info says so", async () => {
    const pod = await cluster.core.readNamespacedPod({
      name: sandbox.info.containerId,
      namespace: cluster.namespace,
    });
    expect(pod.spec?.runtimeClassName).toBe("gvisor");
    // What runs the Pod as warden knows it: the RuntimeClass, not the options' OCI runtime (runc).
    expect(sandbox.info.runtime).toBe("gvisor");
    const r = await run(sandbox, "dmesg | head -n 1; uname -r");
    expect(r.exitCode).toBe(0);
    // gVisor's kernel names itself: the runsc this cluster builds (scripts/k8s/gvisor) reports
    // 4.19.0-gvisor (Debian 12's 20221219 said 4.4.0).
    expect(r.stdout).toBe("[    0.000000] Starting gVisor...\n4.19.0-gvisor\n");
  });

  it("runs as its own uid in /workspace with no capabilities and no service-account token", async () => {
    const r = await run(
      sandbox,
      "id -u; id -g; pwd; grep -E '^Cap(Eff|Bnd):' /proc/self/status; test -e /var/run/secrets/kubernetes.io && echo token=mounted || echo token=none",
    );
    expect(r.stdout).toContain(`${sandbox.info.uid}\n${sandbox.info.uid}\n/workspace\n`);
    expect(r.stdout).toContain("CapEff:\t0000000000000000");
    expect(r.stdout).toContain("CapBnd:\t0000000000000000");
    expect(r.stdout).toContain("token=none");
  });

  it("has a read-only root and size-limited /workspace (1 GiB), /tmp and HOME (64 MiB each)", async () => {
    // gVisor refuses a write to the root as a non-root uid with EACCES before EROFS: the mount says ro.
    const r = await run(sandbox, 'awk \'$2 == "/" { split($4, o, ","); print o[1] }\' /proc/mounts');
    expect(r.stdout).toBe("ro\n");
    expect(await emptyDirSizes(sandbox)).toEqual([1024 ** 3, 64 * 1024 ** 2, 64 * 1024 ** 2]);
  });

  it("has no network: loopback only, no route, a connection out fails", async () => {
    const r = await run(
      sandbox,
      "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '; echo routes=$(tail -n +2 /proc/net/route | wc -l); " +
        "timeout 5 bash -c 'echo > /dev/tcp/1.1.1.1/80' 2>&1 && echo connected || echo failed",
    );
    expect(r.stdout.split("\n")[0]).toBe("lo");
    expect(r.stdout).toContain("routes=0\n");
    expect(r.stdout).toMatch(/(Network is unreachable|No route to host)[\s\S]*failed\n$/);
  });

  it("reports a command's exit code and a killed command's 137 through the channel", async () => {
    expect(await run(sandbox, "echo hi; exit 3")).toMatchObject({ stdout: "hi\n", exitCode: 3 });
    expect((await run(sandbox, "kill -9 $$")).exitCode).toBe(137);
  });
});

describeK8sOn("gvisor", "a session on RuntimeClass gvisor", () => {
  let session: Session;

  afterAll(async () => {
    await session?.close();
    expect(await podLeftovers(`${TENANT}-s`)).toEqual([]);
  });

  it("runs its tools in a gVisor Pod", async () => {
    const cluster = testCluster("gvisor");
    session = await openSession(
      { tenant: `${TENANT}-s` },
      {
        createSandbox: (spec, identity, call) =>
          createKubernetesSandbox({ ...spec, ...identity, ...call }, cluster),
        createSpillStore,
        builtinTools,
      },
    );
    const [bash, write] = await session.runToolCalls([
      { id: "1", name: "bash", arguments: { command: "dmesg | head -n 1" } },
      { id: "2", name: "write", arguments: { path: "g.txt", content: "under gVisor\n" } },
    ]);
    const [read] = await session.runToolCalls([{ id: "3", name: "read", arguments: { path: "g.txt" } }]);
    const text = (m: typeof bash) => m?.content.map((c) => (c.type === "text" ? c.text : "")).join("");
    expect(bash?.isError).toBe(false);
    expect(text(bash)).toContain("Starting gVisor...");
    expect(write?.isError).toBe(false);
    expect(text(read)).toContain("under gVisor");
  });
});
