/**
 * The Kubernetes sandbox on a real cluster: a session is a hardened Pod, commands and files go over
 * warden-helper's channel through the Pod's attach stream, the workspace is copied in and its
 * changes are seen, and no Pod is left: not after destroy, not after a Pod that cannot start.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createKubernetesSandbox, type KubernetesSandbox, podExec } from "../../src/sandbox/index.js";
import { describeK8s, emptyDirSizes, podLeftovers, TEST_RUNTIME_CLASS, testCluster } from "../helpers/k8s.js";
import { run } from "../helpers/sandbox-fixture.js";

const TENANT = `test-k8s-sb-${process.pid}`;

describeK8s("Kubernetes sandbox: a hardened Pod over the attach channel", () => {
  const cluster = testCluster();
  let sandbox: KubernetesSandbox;
  let host: string;

  beforeAll(async () => {
    host = await mkdtemp(join(tmpdir(), "warden-k8s-ws-"));
    await writeFile(join(host, "a.txt"), "alpha\n");
    sandbox = await createKubernetesSandbox(
      { tenant: TENANT, workspace: { hostPath: host }, limits: { memoryBytes: 256 << 20 } },
      cluster,
    );
  });

  afterAll(async () => {
    await sandbox?.destroy();
    await rm(host, { recursive: true, force: true });
    expect(await podLeftovers(TENANT)).toEqual([]);
  });

  it("runs commands over the channel as its own uid (its label's) in /workspace", async () => {
    expect(sandbox.info.execPath).toBe("channel");
    // The Pod's RuntimeClass (none: the node's default runtime), whatever options.runtime said.
    expect(sandbox.info.runtime).toBe(TEST_RUNTIME_CLASS ?? "default");
    const r = await run(sandbox, "id -u; id -g; pwd");
    const uid = sandbox.info.uid;
    expect(uid).toBeGreaterThanOrEqual(2 ** 20);
    expect(r).toMatchObject({ exitCode: 0, stdout: `${uid}\n${uid}\n/workspace\n` });
  });

  it("has no capabilities, no new privileges, seccomp filtering, and no service-account token", async () => {
    const r = await run(
      sandbox,
      "grep -E '^(CapEff|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status; ls /var/run/secrets/kubernetes.io 2>&1 || true",
    );
    expect(r.stdout).toContain("CapEff:\t0000000000000000");
    expect(r.stdout).toContain("CapBnd:\t0000000000000000");
    expect(r.stdout).toContain("NoNewPrivs:\t1");
    expect(r.stdout).toContain("Seccomp:\t2");
    expect(r.stdout).toContain("No such file or directory");
  });

  it("has a read-only root and size-limited memory-backed /workspace, /tmp and HOME", async () => {
    expect((await run(sandbox, "touch /etc/x 2>&1")).stdout).toContain("Read-only file system");
    expect(await emptyDirSizes(sandbox)).toEqual([1024 ** 3, 64 * 1024 ** 2, 64 * 1024 ** 2]);
  });

  it("caps memory at memory + 2 × tmp (/tmp, HOME) + workspace + 1 MiB, and CPU at its limit, in the container's cgroup", async () => {
    // cgroup v2 (memory.max, cpu.max) or v1 (memory/memory.limit_in_bytes, cpu/cpu.cfs_quota_us), whichever the node has.
    const r = await run(
      sandbox,
      "cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes; " +
        "cat /sys/fs/cgroup/cpu.max 2>/dev/null || echo $(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us /sys/fs/cgroup/cpu/cpu.cfs_period_us)",
    );
    const [memory, cpu] = r.stdout.trim().split("\n");
    expect(Number(memory)).toBe((256 << 20) + 2 * (64 << 20) + 1024 ** 3 + (1 << 20));
    expect(cpu).toBe("100000 100000");
  });

  it("has no route out: a connection to an outside address fails with 'Network is unreachable'", async () => {
    const r = await run(sandbox, "echo > /dev/tcp/1.1.1.1/80");
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toContain("Network is unreachable");
  });

  it("reaches no other Pod: another tenant's listener on the Pod subnet is routed but never answers (macvlan private mode)", async () => {
    const other = await createKubernetesSandbox(
      { tenant: `${TENANT}-b`, limits: { memoryBytes: 256 << 20 } },
      cluster,
    );
    try {
      const ip = (await run(other, "hostname -i")).stdout.trim().split(/\s+/)[0] ?? "";
      expect(ip).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
      const listener = run(
        other,
        'timeout 20 python3 -c \'import socket; s=socket.socket(); s.bind(("0.0.0.0", 8080)); s.listen(); c, a = s.accept(); print("accepted", a[0])\'',
      );
      await new Promise((r) => setTimeout(r, 1500));
      const from = await run(
        sandbox,
        `timeout 5 bash -c 'echo > /dev/tcp/${ip}/8080' && echo connected || echo failed $?`,
      );
      expect(from.stdout.trim()).toMatch(/^failed /);
      // The listener was there: the other Pod reaches it itself.
      expect((await run(other, "echo > /dev/tcp/127.0.0.1/8080 && echo connected")).stdout).toBe(
        "connected\n",
      );
      expect((await listener).stdout).toBe("accepted 127.0.0.1\n");
    } finally {
      await other.destroy();
    }
    expect(await podLeftovers(`${TENANT}-b`)).toEqual([]);
  });

  it("stops a process flood at the node's per-Pod pids limit (kubelet podPidsLimit), and the Pod still serves", async () => {
    // bash gives up (exit 254) once fork keeps failing with EAGAIN; the helper says why and kills the group.
    const r = await run(sandbox, "for i in $(seq 300); do sleep 60 & done");
    expect(r.exitCode).toBe(254);
    expect(r.stderr).toContain("the sandbox's process limit is reached");
    expect(await run(sandbox, "echo ok")).toMatchObject({ exitCode: 0, stdout: "ok\n" });
  });

  it("reads, writes and lists files, and reports the workspace's changes", async () => {
    const read = await sandbox.readFile("a.txt", { kind: "bytes", offset: 0, length: 100 });
    expect(read.data.toString()).toBe("alpha\n");
    await sandbox.writeFile("dir/b.txt", Buffer.from("beta"));
    expect((await sandbox.listDir("dir")).map((e) => e.name)).toEqual(["b.txt"]);
    expect(await sandbox.stat("dir/b.txt")).toMatchObject({ type: "file", size: 4 });
    expect(await sandbox.changedPaths()).toEqual([{ path: "dir/b.txt", kind: "added" }]);
  });

  it("exports the workspace as a tar of ./ entries", async () => {
    const chunks: Buffer[] = [];
    for await (const c of await sandbox.exportWorkspace()) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString("latin1");
    expect(text).toContain("./a.txt");
    expect(text).toContain("./dir/b.txt");
  });

  it("runs one command through the exec API too (the bench's baseline)", async () => {
    expect(await podExec(cluster, sandbox.info.containerId, ["sh", "-c", "echo hi; exit 3"])).toEqual({
      exitCode: 3,
      stdout: "hi\n",
      stderr: "",
    });
  });
});

describeK8s("Kubernetes sandbox: failures leave no Pod", () => {
  const cluster = testCluster();
  const tenant = `${TENANT}-f`;

  afterAll(async () => {
    expect(await podLeftovers(tenant)).toEqual([]);
  });

  it("an image the node does not have fails fast with the kubelet's reason, and its Pod is deleted", async () => {
    const started = Date.now();
    await expect(
      createKubernetesSandbox({ tenant, image: "warden-no-such-image:0" }, cluster),
    ).rejects.toThrow(/cannot start: ErrImageNeverPull/);
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(await podLeftovers(tenant)).toEqual([]);
  });

  it("options a Pod cannot honour are refused before anything is created", async () => {
    await expect(
      createKubernetesSandbox({ tenant, workspace: { hostPath: tmpdir(), mode: "rw" } }, cluster),
    ).rejects.toThrow('workspace mode "rw" bind-mounts a host directory');
    await expect(createKubernetesSandbox({ tenant, runtime: "runsc" }, cluster)).rejects.toThrow(
      "backend.runtimeClassName",
    );
  });

  it("a workspace packing to more than 48 MiB is refused naming the cap, and its Pod is deleted", async () => {
    const big = await mkdtemp(join(tmpdir(), "warden-k8s-big-"));
    try {
      await writeFile(join(big, "blob"), Buffer.alloc(49 << 20));
      await expect(
        createKubernetesSandbox({ tenant, workspace: { hostPath: big } }, cluster),
      ).rejects.toThrow("packs to more than 50331648 bytes, the most a Kubernetes sandbox copies in");
      expect(await podLeftovers(tenant)).toEqual([]);
    } finally {
      await rm(big, { recursive: true, force: true });
    }
  });

  it("an abort while the Pod starts deletes it", async () => {
    const ac = new AbortController();
    const creating = createKubernetesSandbox({ tenant, signal: ac.signal }, cluster);
    setTimeout(() => ac.abort(), 300);
    await expect(creating).rejects.toThrow(/abort/i);
    expect(await podLeftovers(tenant)).toEqual([]);
  });
});
