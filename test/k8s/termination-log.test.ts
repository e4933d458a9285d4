/**
 * No session writes without bound to the node's disk. The kubelet bind-mounts a file of its own
 * disk (<kubelet root>/pods/<pod uid>/containers/sandbox/<id>, mode 0666) at the container's
 * terminationMessagePath, /dev/termination-log, which a process without capabilities can neither
 * unmount nor chmod: before helper version 4 `dd if=/dev/zero of=/dev/termination-log bs=1M
 * count=1024` wrote 1 GiB there, past every limit of the Pod (runc and gVisor alike). The channel
 * now caps every file its commands write (RLIMIT_FSIZE, soft and hard) at the larger of the
 * /workspace and /tmp tmpfs sizes (images/sandbox/helper/fsize.go), and, since RLIMIT_FSIZE bounds a
 * file's size but not its blocks (`fallocate -n` took 256 MiB there with a 16 MiB cap), refuses
 * fallocate(2) to every command (a seccomp filter, seccomp.go), and the ioctls that reach the same
 * kernel call (FS_IOC_RESVSP64 took 256 MiB there through the filter of helper version 4, and the
 * i386 compat number 128 MiB). This test reads the node's
 * disk: it runs on the node of scripts/ensure-k8s.sh ($WARDEN_TEST_KUBELET_ROOT names another
 * kubelet root directory).
 */
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createKubernetesSandbox, type KubernetesSandbox } from "../../src/sandbox/kubernetes/index.js";
import { TEST_IMAGE } from "../helpers/backend.js";
import { describeK8s, podLeftovers, TEST_RUNTIME_CLASS, testCluster } from "../helpers/k8s.js";
import { run } from "../helpers/sandbox-fixture.js";

const TENANT = `test-k8s-termlog-${process.pid}`;
const MiB = 1024 * 1024;
/** The Pod's tmpfs sizes: the cap is the larger, the workspace's. */
const WORKSPACE_BYTES = 32 * MiB;
const TMP_BYTES = 16 * MiB;
const KUBELET_ROOT = process.env.WARDEN_TEST_KUBELET_ROOT ?? "/var/lib/warden-k8s/kubelet";

describeK8s("Kubernetes sandbox: no file past the tmpfs size, /dev/termination-log included", () => {
  const cluster = testCluster();
  let sandbox: KubernetesSandbox;

  beforeAll(async () => {
    sandbox = await createKubernetesSandbox(
      { tenant: TENANT, image: TEST_IMAGE, limits: { workspaceBytes: WORKSPACE_BYTES, tmpBytes: TMP_BYTES } },
      cluster,
    );
  });

  afterAll(async () => {
    await sandbox?.destroy();
    expect(await podLeftovers(TENANT)).toEqual([]);
  });

  /** The host file behind the container's /dev/termination-log (one per container start). */
  async function terminationLogOnNode(): Promise<string> {
    const pod = await cluster.core.readNamespacedPod({
      name: sandbox.info.containerId,
      namespace: cluster.namespace,
    });
    const dir = join(KUBELET_ROOT, "pods", pod.metadata?.uid ?? "", "containers", "sandbox");
    const files = await readdir(dir).catch((err: Error) => {
      throw new Error(`${dir} is not readable (${err.message}): run this test on the cluster's node`);
    });
    expect(files).toHaveLength(1);
    return join(dir, files[0] ?? "");
  }

  it("fallocate -n on /dev/termination-log fails and takes no block of the node's disk", async () => {
    const r = await run(sandbox, `fallocate -n -l ${WORKSPACE_BYTES / MiB + 16}M /dev/termination-log`);
    expect(r).toMatchObject({
      exitCode: 1,
      stdout: "",
      stderr: "fallocate: fallocate failed: keep size mode is unsupported\n",
    });
    const onNode = await stat(await terminationLogOnNode());
    expect({ size: onNode.size, blocks: onNode.blocks }).toEqual({ size: 0, blocks: 0 });
  });

  it("the preallocation ioctls fail with EOPNOTSUPP (upper bits of cmd, i386 compat numbers too) and take no block", async () => {
    // The attack's exact command: FS_IOC_RESVSP64 of 256 MiB.
    const repro = await run(
      sandbox,
      `python3 -c 'import fcntl,os,struct;fd=os.open("/dev/termination-log",os.O_RDWR);fcntl.ioctl(fd,0x4030582a,struct.pack("<hh4xqqiI4i",0,0,0,256<<20,0,0,0,0,0,0))'`,
    );
    expect(repro.exitCode).toBe(1);
    expect(repro.stderr.split("\n").at(-2)).toBe("OSError: [Errno 95] Operation not supported");
    // RESVSP, RESVSP64, ZERO_RANGE; as is and with bits above the low 32 set (the kernel reads
    // cmd as an unsigned int). Python passes the request as an unsigned long.
    const native = await run(sandbox, `python3 - <<'EOF'\n${IOCTL_SCRIPT}EOF`);
    expect(native).toMatchObject({ exitCode: 0, stderr: "" });
    expect(native.stdout).toBe(
      [0x40305828, 0x4030582a, 0x40305839]
        .flatMap((cmd) => [cmd, cmd + 0xdead * 2 ** 32])
        .map((cmd) => `${cmd.toString(16)} [Errno 95] Operation not supported\n`)
        .join(""),
    );
    // The i386 compat number (int 0x80, struct space_resv_32): gVisor has no 32-bit syscalls (ENOSYS).
    const compat = await run(sandbox, `python3 - <<'EOF'\n${COMPAT_SCRIPT}EOF`);
    const errno = TEST_RUNTIME_CLASS === "gvisor" ? 38 : 95;
    expect(compat).toMatchObject({ exitCode: 0, stdout: `i386 ioctl RESVSP64_32 -> -${errno}\n` });
    const onNode = await stat(await terminationLogOnNode());
    expect({ size: onNode.size, blocks: onNode.blocks }).toEqual({ size: 0, blocks: 0 });
  });

  it("fallocate(2) fails in /workspace too; posix_fallocate falls back to writing", async () => {
    const r = await run(
      sandbox,
      "fallocate -l 1M /workspace/x; echo status $?; stat -c %s /workspace/x; rm -f /workspace/x",
    );
    expect(r).toMatchObject({
      stdout: "status 1\n0\n",
      stderr: "fallocate: fallocate failed: Operation not supported\n",
    });
    const py = await run(
      sandbox,
      "python3 -c 'import os; fd = os.open(\"/workspace/p\", os.O_CREAT | os.O_WRONLY); os.posix_fallocate(fd, 0, 1 << 20); print(os.fstat(fd).st_size)'; rm -f /workspace/p",
    );
    expect(py).toMatchObject({ exitCode: 0, stdout: `${MiB}\n`, stderr: "" });
  });

  it("dd to /dev/termination-log is stopped by SIGXFSZ at exactly the cap; the node's file holds the cap", async () => {
    const r = await run(
      sandbox,
      `dd if=/dev/zero of=/dev/termination-log bs=1M count=${WORKSPACE_BYTES / MiB + 16} 2>/dev/null; echo "status $?"`,
    );
    // bash's status of a command killed by signal 25 (SIGXFSZ): 128 + 25.
    expect(r).toMatchObject({ exitCode: 0, stdout: "status 153\n" });
    // The cap is the larger tmpfs plus 1 MiB (helper fsize.go capSlackBytes: filling a tmpfs gives ENOSPC).
    expect((await stat(await terminationLogOnNode())).size).toBe(WORKSPACE_BYTES + MiB);
  });

  it("a file of exactly the workspace's size is still written", async () => {
    const r = await run(sandbox, `head -c ${WORKSPACE_BYTES} /dev/zero > big && stat -c %s big && rm big`);
    expect(r).toMatchObject({ exitCode: 0, stdout: `${WORKSPACE_BYTES}\n`, stderr: "" });
  });

  it("a command cannot raise the cap", async () => {
    const r = await run(sandbox, "ulimit -Hf; ulimit -f unlimited; echo status $?");
    expect(r.stdout).toBe(`${(WORKSPACE_BYTES + MiB) / 1024}\nstatus 1\n`);
    expect(r.stderr).toBe("bash: line 1: ulimit: file size: cannot modify limit: Operation not permitted\n");
  });
});

/** Each preallocation ioctl of 256 MiB on /dev/termination-log; prints "<cmd hex> <error or ok>". */
const IOCTL_SCRIPT = `import fcntl, os, struct
fd = os.open("/dev/termination-log", os.O_RDWR)
arg = struct.pack("<hh4xqqiI4i", 0, 0, 0, 256 << 20, 0, 0, 0, 0, 0, 0)
for cmd in (0x40305828, 0x4030582a, 0x40305839):
    for c in (cmd, cmd | 0xdead << 32):
        try:
            fcntl.ioctl(fd, c, arg)
            print("%x ok" % c)
        except OSError as e:
            print("%x %s" % (c, e))
`;

/**
 * The attack's resv32.py: ioctl FS_IOC_RESVSP64_32 (0x402c582a) of 128 MiB through the i386 entry
 * (int 0x80, syscall 54), its 44-byte struct in a buffer below 4 GiB; prints the call's result.
 */
const COMPAT_SCRIPT = `import ctypes, mmap, os, struct
fd = os.open("/dev/termination-log", os.O_RDWR)
buf = mmap.mmap(-1, 4096, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x40, prot=7)
addr = ctypes.addressof(ctypes.c_char.from_buffer(buf))
buf[512:556] = struct.pack("<hhqqiI4i", 0, 0, 0, 128 << 20, 0, 0, 0, 0, 0, 0)
code = (b"\\x53\\xb8" + struct.pack("<I", 54) + b"\\xbb" + struct.pack("<I", fd) + b"\\xb9" + struct.pack("<I", 0x402c582a)
        + b"\\xba" + struct.pack("<I", addr + 512) + b"\\xcd\\x80\\x48\\x63\\xc0\\x5b\\xc3")
buf[0:len(code)] = code
print("i386 ioctl RESVSP64_32 ->", ctypes.CFUNCTYPE(ctypes.c_long)(addr)(), flush=True)
`;
