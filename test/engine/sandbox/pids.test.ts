/**
 * The pids budget (issue 11, "Trust boundary", item 9): a batch the server accepts must not kill
 * its own session. warden-helper used to cost one thread per running command (threads count
 * against pids.max) and aborted when the Go runtime could not create one; output still in a
 * command's pipes was cut when the channel was slow. Sessions here use the default limits.
 * WARDEN_TEST_IMAGE runs them against another build of the sandbox image than the default tag.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { DEFAULT_LIMITS, HELPER_PIDS_RESERVE, minPidsFor } from "../../../src/sandbox/limits.js";
import { DEFAULT_MAX_CONCURRENT_TOOL_CALLS } from "../../../src/server/config/index.js";
import { createSession, type Session } from "../../../src/session/index.js";
import type { ToolCall, ToolResultMessage } from "../../../src/tools/types.js";
import { describeEngine } from "../../helpers/engine.js";

const bash = (id: string, command: string, timeout?: number): ToolCall => ({
  id,
  name: "bash",
  arguments: timeout === undefined ? { command } : { command, timeout },
});
const image = process.env.WARDEN_TEST_IMAGE ? { image: process.env.WARDEN_TEST_IMAGE } : {};
const text = (r: ToolResultMessage | undefined) =>
  (r?.content[0] as { text: string } | undefined)?.text ?? "";
/** The cgroup's pids.peak (v2, else v1; kernels before 6.1 have none: "unavailable"). */
const PIDS_PEAK =
  "cat /sys/fs/cgroup/pids.peak 2>/dev/null || cat /sys/fs/cgroup/pids/pids.peak 2>/dev/null || echo unavailable";

/** Threads of the PID-1 parent and the serving helper together. */
const HELPER_TASKS =
  'for p in /proc/[0-9]*; do [ "$(cat $p/comm 2>/dev/null)" = warden-helper ] && ls $p/task; done | wc -l';

describeEngine("pids budget: a batch of maxConcurrentToolCalls calls at the default limits", () => {
  let session: Session;
  beforeAll(async () => {
    session = await createSession({ tenant: "test-pids-batch", sandbox: image });
  });
  afterAll(async () => {
    await session?.close();
  });

  it("64 bash calls printing 10 MB each all complete with exactly 10,000,000 bytes and exit 0; `true` works afterwards", async () => {
    expect(DEFAULT_MAX_CONCURRENT_TOOL_CALLS).toBe(64);
    expect(minPidsFor(DEFAULT_MAX_CONCURRENT_TOOL_CALLS)).toBeLessThanOrEqual(DEFAULT_LIMITS.pids);
    const calls = Array.from({ length: DEFAULT_MAX_CONCURRENT_TOOL_CALLS }, (_, i) =>
      bash(`c${i}`, "yes | head -c 10000000"),
    );
    const results = await session.runToolCalls(calls);
    const outcome = results.map((r) => {
      const d = r.details as { exitCode?: number; truncation?: { totalBytes: number } };
      return [r.toolCallId, r.isError, d.exitCode, d.truncation?.totalBytes];
    });
    expect(outcome).toEqual(calls.map((c) => [c.id, false, 0, 10_000_000]));

    const after = await session.runToolCalls([
      bash("t", "true"),
      bash("peak", PIDS_PEAK),
      bash("helper", HELPER_TASKS),
    ]);
    expect(after.map((r) => [r.isError, text(r)])).toEqual([
      [false, "(no output)"],
      [false, expect.stringMatching(/^(\d+|unavailable)\n$/)],
      [false, expect.stringMatching(/^\d+\n$/)],
    ]);
    const [peak, helperTasks] = [Number(text(after[1])), Number(text(after[2]))];
    console.log(
      `${calls.length} calls of \`yes | head\`: pids.peak ${peak} of ${DEFAULT_LIMITS.pids}; helper tasks ${helperTasks}`,
    );
    // The helper's threads stay within its reserve (Go never ends a thread: a thread per running
    // command would still show here).
    expect(helperTasks).toBeLessThanOrEqual(HELPER_PIDS_RESERVE);
    if (!Number.isNaN(peak)) expect(peak).toBeLessThanOrEqual(minPidsFor(calls.length));
  }, 600_000);
});

describeEngine("pids budget: the pids limit used up", () => {
  let session: Session;
  beforeAll(async () => {
    session = await createSession({ tenant: "test-pids-full", sandbox: { limits: { pids: 64 }, ...image } });
  });
  afterAll(async () => {
    await session?.close();
  });

  it("a command started while every pid is taken fails naming pids.max = 64; the helper survives and serves `echo ok` after", async () => {
    // Forks until the limit refuses one (Python gets EAGAIN at once, bash would retry for ~30 s),
    // marks /workspace/full without forking, and keeps taking every pid that comes free.
    const hog =
      'python3 -c \'import os,time\nwhile True:\n  try:\n    pid = os.fork()\n  except OSError:\n    open("/workspace/full", "w").close(); time.sleep(0.01); continue\n  if pid == 0:\n    time.sleep(60); os._exit(0)\'';
    const stop = new AbortController();
    const holding = session.runToolCalls([bash("hog", hog, 60)], { signal: stop.signal });
    try {
      // Until the hog has met the limit (the test's timeout bounds the wait).
      while ((await session.sandbox.stat("/workspace/full")) === null)
        await new Promise((r) => setTimeout(r, 100));
      const [refused] = await session.runToolCalls([bash("late", "echo hi")]);
      expect(refused?.isError).toBe(true);
      expect(text(refused)).toContain(
        "warden-helper: cannot start bash: the sandbox's process limit is reached (pids.max = 64, processes and threads together; warden's limits.pids).",
      );
      expect(text(refused)).toContain("Command exited with code 126");
    } finally {
      stop.abort();
    }
    const [hogResult] = await holding;
    expect([hogResult?.isError, text(hogResult).endsWith("Command aborted")]).toEqual([true, true]);
    const [ok] = await session.runToolCalls([bash("ok", "echo ok")]);
    expect([ok?.isError, text(ok)]).toEqual([false, "ok\n"]);
  }, 120_000);

  it("case 25: a fork bomb returns within 15 s, its output naming pids.max = 64; then `echo ok` prints ok and no bomb process is left", async () => {
    // The call's own 10 s timeout ends it however long the bomb runs; no wall-clock bound here.
    const [bomb] = await session.runToolCalls([bash("bomb", ":(){ :|:& };:", 10)]);
    // `bash -c` returns at once (the bomb runs in the background); its group is killed after the
    // pipe grace, and the helper names the limit behind bash's fork errors.
    expect(text(bomb)).toContain("fork: retry: Resource temporarily unavailable");
    expect(text(bomb)).toContain(
      "warden-helper: a process could not be started while this command ran: the sandbox's process limit is reached (pids.max = 64,",
    );
    const [ok] = await session.runToolCalls([bash("ok", "echo ok")]);
    expect([ok?.isError, text(ok)]).toEqual([false, "ok\n"]);
    // The only live bash left is the one running this check (an exited bomb process may still be a
    // zombie for a moment, until PID 1 reaps it: it runs nothing, so it is not counted). `ps` runs
    // alone, before the pipeline: a pipeline's own children are named bash between their fork and
    // exec, and a `ps` beside them counted one of those (a red CI run).
    const [left] = await session.runToolCalls([
      bash(
        "left",
        "seen=$(ps -e -o stat=,comm=); printf '%s\\n' \"$seen\" | awk '$1 !~ /^Z/ && $2 == \"bash\"' | wc -l",
      ),
    ]);
    expect(text(left)).toBe("1\n");
  }, 120_000);
});
