/**
 * The user-namespace probes of test/engine/sandbox/userns.test.ts (Docker, runc and runsc) and
 * test/k8s/userns.test.ts (Pods, runc and gvisor): what a sandbox command tries, and the exact
 * answers it must get (warden-helper's seccomp filter, images/sandbox/helper/userns.go).
 */
import { expect } from "vitest";
import type { Sandbox } from "../../src/sandbox/types.js";
import { run } from "./sandbox-fixture.js";

/**
 * Raw system calls of x86_64 through libc's syscall(3): clone and clone3 with CLONE_NEWUSER (a
 * child that gets made exits at once, and its parent prints its pid and "made"), unshare with
 * CLONE_NEWUSER, setns into the process's own user namespace; each prints "<call> <result> <errno text>".
 */
export const USERNS_SYSCALLS = `import ctypes, os, struct
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NEWUSER, SIGCHLD = 0x10000000, 17
def call(name, *args):
    r = libc.syscall(*[ctypes.c_long(a) for a in args])
    if r == 0 and name.startswith("clone"):
        os._exit(0)
    e = ctypes.get_errno()
    print(name, r, os.strerror(e) if r < 0 else "made", flush=True)
    if r > 0 and name.startswith("clone"):
        os.waitpid(r, 0)
call("clone", 56, NEWUSER | SIGCHLD, 0, 0, 0, 0)
args = ctypes.create_string_buffer(struct.pack("<11Q", NEWUSER, 0, 0, 0, SIGCHLD, 0, 0, 0, 0, 0, 0))
call("clone3", 435, ctypes.addressof(args), 88)
call("unshare", 272, NEWUSER)
call("setns", 308, os.open("/proc/self/ns/user", os.O_RDONLY), 0)
`;

/**
 * Asserts that no command of `sandbox` makes or enters a user namespace: util-linux `unshare -Urm`
 * and `unshare -U` fail, clone/unshare(CLONE_NEWUSER) and setns with EPERM (python and perl),
 * clone3 with ENOSYS; and that threads (glibc tries clone3 first, then clone) and processes still start.
 */
export async function expectNoUserNamespace(sandbox: Sandbox): Promise<void> {
  const refused = "unshare: unshare failed: Operation not permitted\n";
  for (const cmd of ["unshare -Urm sh -c 'mount -t tmpfs x /tmp && echo mounted'", "unshare -U true"]) {
    expect(await run(sandbox, cmd)).toMatchObject({ exitCode: 1, stdout: "", stderr: refused });
  }
  const py = await run(sandbox, `python3 - <<'EOF'\n${USERNS_SYSCALLS}EOF`);
  expect(py).toMatchObject({ exitCode: 0, stderr: "" });
  expect(py.stdout).toBe(
    [
      "clone -1 Operation not permitted",
      "clone3 -1 Function not implemented",
      "unshare -1 Operation not permitted",
      "setns -1 Operation not permitted",
      "",
    ].join("\n"),
  );
  const perl = await run(sandbox, `perl -e '$r = syscall(272, 0x10000000); print "unshare $r $!\\n"'`);
  expect(perl).toMatchObject({ exitCode: 0, stdout: "unshare -1 Operation not permitted\n", stderr: "" });
  const threads = await run(
    sandbox,
    `python3 -c 'import threading; t = threading.Thread(target=print, args=("thread",)); t.start(); t.join()'; sh -c 'echo process'`,
  );
  expect(threads).toMatchObject({ exitCode: 0, stdout: "thread\nprocess\n", stderr: "" });
}
