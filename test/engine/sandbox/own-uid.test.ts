/**
 * Each sandbox runs as its own host uid (src/sandbox/sandbox-uid.ts), so the kernel's per-user
 * budgets are not shared between sessions: the attack's finding 3 (one session held every inotify
 * instance of uid 1000, and every other session's inotify_init1 failed with EMFILE). On both
 * backends (test/helpers/backend.ts): runc containers and runc Pods share the host kernel.
 */
import { afterAll, expect, it } from "vitest";
import { SANDBOX_UID_END, SANDBOX_UID_MIN, type Sandbox } from "../../../src/sandbox/index.js";
import { backendLeftovers, createTestSandbox, describeBackend } from "../../helpers/backend.js";
import { run } from "../../helpers/sandbox-fixture.js";

const tenant = `test-uid-${process.pid}`;

/** Opens inotify instances until the kernel refuses, writes how many to /tmp/held, then holds them. */
const HOLD_ALL = [
  "import ctypes, os, time",
  "libc = ctypes.CDLL(None, use_errno=True)",
  "n = 0",
  "while libc.inotify_init1(0) >= 0: n += 1",
  "err = os.strerror(ctypes.get_errno())",
  "open('/tmp/held.part', 'w').write(f'{n} {err}')",
  "os.rename('/tmp/held.part', '/tmp/held')",
  "time.sleep(120)",
].join("\n");

/** One inotify_init1: `ok`, or the error it failed with. */
const OPEN_ONE =
  "import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); fd = libc.inotify_init1(0); " +
  "print('ok' if fd >= 0 else os.strerror(ctypes.get_errno()))";

async function shell(sandbox: Sandbox, script: string): Promise<string> {
  const r = await run(sandbox, script, { timeoutMs: 60_000 });
  if (r.exitCode !== 0) throw new Error(`exit ${r.exitCode}: ${r.stderr}`);
  return r.stdout;
}

describeBackend("each sandbox's own host uid", () => {
  afterAll(async () => {
    expect(await backendLeftovers(tenant)).toEqual([]);
  });

  it("two sandboxes run as two different non-root uids, each the one its info records, owning their files", async () => {
    await using a = await createTestSandbox({ tenant });
    await using b = await createTestSandbox({ tenant });
    const ids = [a.info.uid, b.info.uid];
    for (const uid of ids) {
      expect(uid).toBeGreaterThanOrEqual(SANDBOX_UID_MIN);
      expect(uid).toBeLessThan(SANDBOX_UID_END);
    }
    expect(ids[0]).not.toBe(ids[1]);
    for (const sb of [a, b]) {
      await sb.writeFile("w.txt", Buffer.from("x"));
      const uid = sb.info.uid;
      // The workspace directory is its group's (a Pod's emptyDir belongs to root and the fsGroup).
      expect(
        await shell(sb, "id -u; id -g; touch /tmp/t; stat -c %g /workspace; stat -c %u:%g w.txt /tmp/t"),
      ).toBe(`${uid}\n${uid}\n${uid}\n${uid}:${uid}\n${uid}:${uid}\n`);
    }
  });

  it("a session holding every inotify instance it may open leaves another session's inotify_init1 working (attack finding 3b)", async () => {
    await using a = await createTestSandbox({ tenant });
    await using b = await createTestSandbox({ tenant });
    const max = Number((await shell(a, "cat /proc/sys/fs/inotify/max_user_instances")).trim());
    const stop = new AbortController();
    const holding = a.exec(
      { argv: ["python3", "-c", HOLD_ALL] },
      { signal: stop.signal, timeoutMs: 120_000 },
    );
    try {
      let held = "";
      while (!held) {
        held = await shell(a, "cat /tmp/held 2>/dev/null || true");
        if (!held) await new Promise((r) => setTimeout(r, 100));
      }
      // A's uid is its own: it got the whole per-user budget, none taken by another sandbox.
      expect(held).toBe(`${max} Too many open files`);
      expect((await shell(b, `python3 -c "${OPEN_ONE}"`)).trim()).toBe("ok");
    } finally {
      stop.abort();
      await holding;
    }
  }, 120_000);
});
