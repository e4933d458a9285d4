/**
 * The image's execute-only helper (images/sandbox/Dockerfile, SEALED_HELPER_PATH): root owned, mode
 * 0111, so a process that execs it is non-dumpable from its execve (Linux fs/exec.c would_dump),
 * before the helper's own prctl(PR_SET_DUMPABLE, 0). An attack seized a re-opened Kubernetes channel
 * (PTRACE_SEIZE by a command of the same uid, 27 of 30 fresh helpers won) in the moments before that
 * prctl and ran fallocate past the file-size cap and the seccomp filter. Here a command starts the
 * copy stopped before its first prctl (`--init` outside PID 1 logs and exits, but its stderr is a
 * full pipe, so it blocks in that write) and tries /proc/<pid>/environ and PTRACE_SEIZE; the
 * readable copy (what every channel ran before) allows both. Both backends; on Kubernetes the
 * channel's own process is the sealed copy.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { HELPER_PATH, SEALED_HELPER_PATH } from "../../../src/sandbox/channel/protocol/helper-path.js";
import type { Sandbox } from "../../../src/sandbox/types.js";
import { backendLeftovers, createTestSandbox, describeBackend, TEST_BACKEND } from "../../helpers/backend.js";
import { run } from "../../helpers/sandbox-fixture.js";

const TENANT = `test-sealed-helper-${process.pid}`;
/** gVisor loads no file its caller cannot read: there the copy does not run, and the channel runs the readable one. */
const GVISOR = TEST_BACKEND === "kubernetes" && process.env.WARDEN_TEST_RUNTIME_CLASS === "gvisor";

/** Starts argv[1] `--init` blocked on a full stderr pipe, then reports environ and PTRACE_SEIZE. */
const PROBE = `import ctypes, os, subprocess, sys, time
libc = ctypes.CDLL(None, use_errno=True)
r, w = os.pipe()
os.set_blocking(w, False)
try:
    while True:
        os.write(w, b"x" * 65536)
except BlockingIOError:
    pass
os.set_blocking(w, True)
p = subprocess.Popen([sys.argv[1], "--init"], stderr=w)
time.sleep(0.5)
try:
    open("/proc/%d/environ" % p.pid, "rb").read()
    print("environ: readable")
except OSError as e:
    print("environ:", e.strerror)
rc = libc.ptrace(0x4206, p.pid, 0, 0)  # PTRACE_SEIZE
print("seize:", "attached" if rc == 0 else os.strerror(ctypes.get_errno()))
p.kill()
p.wait()
`;

describeBackend("the execute-only helper: non-dumpable from its execve", () => {
  let sandbox: Sandbox;

  beforeAll(async () => {
    sandbox = await createTestSandbox({ tenant: TENANT });
  });

  afterAll(async () => {
    await sandbox?.destroy();
    expect(await backendLeftovers(TENANT)).toEqual([]);
  });

  const probe = (path: string) => run(sandbox, `python3 - ${path} <<'EOF'\n${PROBE}EOF`);

  it("is root owned, mode 0111, and runs for the sandbox user (not under gVisor)", async () => {
    const r = await run(sandbox, `stat -c '%a %U' ${SEALED_HELPER_PATH}; ${SEALED_HELPER_PATH} --version`);
    expect(r).toMatchObject(
      GVISOR
        ? {
            exitCode: 126,
            stdout: "111 root\n",
            stderr: `bash: line 1: ${SEALED_HELPER_PATH}: Permission denied\n`,
          }
        : { exitCode: 0, stdout: "111 root\n9\n", stderr: "" },
    );
  });

  it.skipIf(GVISOR)(
    "a fresh process of it refuses environ and PTRACE_SEIZE to a command of the same uid (gVisor: skipped, the copy does not run there)",
    async () => {
      expect(await probe(SEALED_HELPER_PATH)).toMatchObject({
        exitCode: 0,
        stdout: "environ: Permission denied\nseize: Operation not permitted\n",
        stderr: "",
      });
    },
  );

  it.skipIf(GVISOR)(
    "the readable copy, before its prctl, allows both (what the fix closes; gVisor: skipped, this probe hung there for 180 s, not investigated)",
    async () => {
      expect(await probe(HELPER_PATH)).toMatchObject({
        exitCode: 0,
        stdout: "environ: readable\nseize: attached\n",
        stderr: "",
      });
    },
  );

  it("on Kubernetes the channel runs the sealed copy (under gVisor the readable one)", async () => {
    const r = await run(sandbox, "ps -eo args= | grep -- '--channel$' | grep -v grep");
    const channel = GVISOR ? `${HELPER_PATH} --channel\n` : `${SEALED_HELPER_PATH} --channel\n`;
    expect(r.stdout).toBe(TEST_BACKEND === "kubernetes" ? channel : "");
  });

  it.runIf(TEST_BACKEND !== "kubernetes")(
    "on Docker under runc, PID 1 and the helper serving the channel run the sealed copy",
    async () => {
      const r = await run(sandbox, "ps -eo args= | grep '^/.*warden-helper' | grep -v grep");
      expect(r.stdout).toBe(`${SEALED_HELPER_PATH}\n${SEALED_HELPER_PATH} --serve\n`);
    },
  );
});
