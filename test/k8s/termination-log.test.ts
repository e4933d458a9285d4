/**
 * No session writes without bound to the node's disk. The kubelet bind-mounts a file of its own
 * disk (<kubelet root>/pods/<pod uid>/containers/sandbox/<id>, mode 0666) at the container's
 * terminationMessagePath. At Kubernetes' default, /dev/termination-log, any process could write
 * it: before helper version 4 `dd if=/dev/zero of=/dev/termination-log bs=1M count=1024` wrote
 * 1 GiB there, past every limit of the Pod (runc and gVisor alike), and the file-size cap that came
 * next (RLIMIT_FSIZE at the larger tmpfs size, images/sandbox/helper/fsize.go) still let 65 MiB
 * through with a 64 MiB workspace. Now the path is /var/lib/warden/termination/log, in a directory
 * of the image that is root's with mode 0700 (src/sandbox/kubernetes/pod-spec.ts
 * TERMINATION_MESSAGE_PATH): the sandbox's uid, never root and without capabilities, cannot
 * traverse it, so no byte reaches the node's file (Kubernetes reads at most 4096 bytes of it).
 * The cap stays, as defence in depth, with its seccomp half: fallocate(2) and the preallocation
 * ioctls are refused (RLIMIT_FSIZE bounds a file's size, not its blocks). This test reads the
 * node's disk: it runs on the node of scripts/ensure-k8s.sh ($WARDEN_TEST_KUBELET_ROOT names
 * another kubelet root directory).
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
/** chmod of the root-only directory: runc checks the read-only root first; gVisor the owner. */
const CHMOD_ERROR = TEST_RUNTIME_CLASS === "gvisor" ? "Operation not permitted" : "Read-only file system";
const KUBELET_ROOT = process.env.WARDEN_TEST_KUBELET_ROOT ?? "/var/lib/warden-k8s/kubelet";

describeK8s(
  "Kubernetes sandbox: the termination message file out of reach, no file past the tmpfs size",
  () => {
    const cluster = testCluster();
    let sandbox: KubernetesSandbox;

    beforeAll(async () => {
      sandbox = await createKubernetesSandbox(
        {
          tenant: TENANT,
          ...(TEST_IMAGE ? { image: TEST_IMAGE } : {}),
          limits: { workspaceBytes: WORKSPACE_BYTES, tmpBytes: TMP_BYTES },
        },
        cluster,
      );
    });

    afterAll(async () => {
      await sandbox?.destroy();
      expect(await podLeftovers(TENANT)).toEqual([]);
    });

    /** The host file behind the container's termination message file (one per container start). */
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

    it("the termination message file is in a root-only directory no command reaches; a 65 MiB write leaves the node's file empty", async () => {
      const pod = await cluster.core.readNamespacedPod({
        name: sandbox.info.containerId,
        namespace: cluster.namespace,
      });
      expect(pod.spec?.containers[0]?.terminationMessagePath).toBe("/var/lib/warden/termination/log");
      const r = await run(
        sandbox,
        [
          "id -u",
          "stat -c '%U %a' /var/lib/warden/termination",
          "ls /var/lib/warden/termination",
          "echo x > /var/lib/warden/termination/log",
          "dd if=/dev/zero of=/var/lib/warden/termination/log bs=1M count=65 status=none",
          "chmod 0777 /var/lib/warden/termination",
          "test -e /dev/termination-log || echo no /dev/termination-log",
        ].join("; "),
      );
      expect(r.stdout).toBe(`${sandbox.info.uid}\nroot 700\nno /dev/termination-log\n`);
      expect(r.stderr).toBe(
        [
          "ls: cannot open directory '/var/lib/warden/termination': Permission denied",
          "bash: line 1: /var/lib/warden/termination/log: Permission denied",
          "dd: failed to open '/var/lib/warden/termination/log': Permission denied",
          `chmod: changing permissions of '/var/lib/warden/termination': ${CHMOD_ERROR}`,
          "",
        ].join("\n"),
      );
      const onNode = await stat(await terminationLogOnNode());
      expect({ size: onNode.size, blocks: onNode.blocks }).toEqual({ size: 0, blocks: 0 });
    });

    it("fallocate -n fails and takes no block; posix_fallocate falls back to writing", async () => {
      const r = await run(
        sandbox,
        `: > /workspace/x; fallocate -n -l ${WORKSPACE_BYTES / MiB + 16}M /workspace/x; echo status $?; stat -c '%s %b' /workspace/x; rm -f /workspace/x`,
      );
      expect(r).toMatchObject({
        stdout: "status 1\n0 0\n",
        stderr: "fallocate: fallocate failed: keep size mode is unsupported\n",
      });
      const plain = await run(
        sandbox,
        "fallocate -l 1M /workspace/x; echo status $?; stat -c %s /workspace/x; rm -f /workspace/x",
      );
      expect(plain).toMatchObject({
        stdout: "status 1\n0\n",
        stderr: "fallocate: fallocate failed: Operation not supported\n",
      });
      const py = await run(
        sandbox,
        "python3 -c 'import os; fd = os.open(\"/workspace/p\", os.O_CREAT | os.O_WRONLY); os.posix_fallocate(fd, 0, 1 << 20); print(os.fstat(fd).st_size)'; rm -f /workspace/p",
      );
      expect(py).toMatchObject({ exitCode: 0, stdout: `${MiB}\n`, stderr: "" });
    });

    it("the preallocation ioctls fail with EOPNOTSUPP (upper bits of cmd, i386 compat numbers too)", async () => {
      // The attack's exact command (on /dev/termination-log then): FS_IOC_RESVSP64 of 256 MiB.
      const repro = await run(
        sandbox,
        `python3 -c 'import fcntl,os,struct;fd=os.open("/workspace/r",os.O_RDWR|os.O_CREAT);fcntl.ioctl(fd,0x4030582a,struct.pack("<hh4xqqiI4i",0,0,0,256<<20,0,0,0,0,0,0))'`,
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
      expect((await run(sandbox, "stat -c '%s %b' /workspace/r; rm /workspace/r")).stdout).toBe("0 0\n");
    });

    it("dd past the cap into /dev/shm (64 MiB, larger than the cap) is stopped by SIGXFSZ at exactly the cap", async () => {
      const r = await run(
        sandbox,
        `dd if=/dev/zero of=/dev/shm/big bs=1M count=${WORKSPACE_BYTES / MiB + 16} 2>/dev/null; echo "status $?"; stat -c %s /dev/shm/big; rm /dev/shm/big`,
      );
      // bash's status of a command killed by signal 25 (SIGXFSZ): 128 + 25. The cap is the larger
      // tmpfs plus 1 MiB (helper fsize.go capSlackBytes: filling a tmpfs gives ENOSPC).
      // (bash reports the signal on its stderr, with dd's pid.)
      expect(r).toMatchObject({ exitCode: 0, stdout: `status 153\n${WORKSPACE_BYTES + MiB}\n` });
    });

    it("a file of exactly the workspace's size is still written", async () => {
      const r = await run(sandbox, `head -c ${WORKSPACE_BYTES} /dev/zero > big && stat -c %s big && rm big`);
      expect(r).toMatchObject({ exitCode: 0, stdout: `${WORKSPACE_BYTES}\n`, stderr: "" });
    });

    it("a command cannot raise the cap", async () => {
      const r = await run(sandbox, "ulimit -Hf; ulimit -f unlimited; echo status $?");
      expect(r.stdout).toBe(`${(WORKSPACE_BYTES + MiB) / 1024}\nstatus 1\n`);
      expect(r.stderr).toBe(
        "bash: line 1: ulimit: file size: cannot modify limit: Operation not permitted\n",
      );
    });
  },
);

/** Each preallocation ioctl of 256 MiB on a workspace file; prints "<cmd hex> <error or ok>". */
const IOCTL_SCRIPT = `import fcntl, os, struct
fd = os.open("/workspace/r", os.O_RDWR | os.O_CREAT)
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
fd = os.open("/workspace/r", os.O_RDWR | os.O_CREAT)
buf = mmap.mmap(-1, 4096, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x40, prot=7)
addr = ctypes.addressof(ctypes.c_char.from_buffer(buf))
buf[512:556] = struct.pack("<hhqqiI4i", 0, 0, 0, 128 << 20, 0, 0, 0, 0, 0, 0)
code = (b"\\x53\\xb8" + struct.pack("<I", 54) + b"\\xbb" + struct.pack("<I", fd) + b"\\xb9" + struct.pack("<I", 0x402c582a)
        + b"\\xba" + struct.pack("<I", addr + 512) + b"\\xcd\\x80\\x48\\x63\\xc0\\x5b\\xc3")
buf[0:len(code)] = code
print("i386 ioctl RESVSP64_32 ->", ctypes.CFUNCTYPE(ctypes.c_long)(addr)(), flush=True)
`;
