/**
 * Exec over warden-helper against a real engine: streaming, exit codes, process groups, timeout,
 * abort, concurrency and backpressure (public faults 19, 20, 22, 23).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { SandboxNotRunningError } from "../../../../src/errors.js";
import { channelExec } from "../../../../src/sandbox/channel/index.js";
import { channelTenant, type HelperBox, runOn, startHelperBox } from "../../../helpers/channel-fixture.js";
import { describeEngine } from "../../../helpers/engine.js";
import { liveBytes } from "../../../helpers/live-memory.js";
import { leftovers } from "../../../helpers/sandbox-fixture.js";
import { beating, stillBeating } from "../../../helpers/survivors.js";

const tenant = channelTenant("exec");

describeEngine("channel exec", () => {
  let box: HelperBox;
  beforeAll(async () => {
    box = await startHelperBox(tenant);
  });
  afterAll(async () => {
    await box?.destroy();
    expect(await leftovers(tenant)).toEqual([]);
  });

  it("runs an argv and a shell script, cwd /workspace by default, as uid 1000", async () => {
    expect(await runOn(box.client, { argv: ["pwd"] })).toMatchObject({
      exitCode: 0,
      stdout: "/workspace\n",
      stderr: "",
    });
    const s = await runOn(box.client, "cd /tmp && pwd; echo $0; id -u", { cwd: "/" });
    expect(s.stdout).toBe("/tmp\nbash\n1000\n");
  });

  it("sees only PATH, HOME, LANG and the env it was given", async () => {
    const r = await runOn(box.client, { argv: ["env"] }, { env: { FOO: "bar baz" } });
    const names = r.stdout
      .trim()
      .split("\n")
      .map((l) => l.split("=")[0])
      .sort();
    expect(names).toEqual(["FOO", "HOME", "LANG", "PATH"]);
    expect(r.stdout).toContain("FOO=bar baz\n");
  });

  it("runs each command in its own session and process group, stdin /dev/null", async () => {
    const r = await runOn(box.client, "ps -o pid=,pgid=,sid= -p $$; readlink /proc/self/fd/0");
    const [pid, pgid, sid] = r.stdout.split("\n")[0]!.trim().split(/\s+/);
    expect(pgid).toBe(pid);
    expect(sid).toBe(pid);
    expect(r.stdout.split("\n")[1]).toBe("/dev/null");
  });

  it("case 19: a background child holding the output pipe does not hang the call", async () => {
    // The background loops never end: a call that waited for them would time out after 30 s.
    const a = await runOn(box.client, `${beating("c19")} & echo done`, { timeoutMs: 30_000 });
    expect(a).toMatchObject({ exitCode: 0, stdout: "done\n", timedOut: false });
    const b = await runOn(
      box.client,
      "(while :; do echo t; : > /tmp/beat-c19; sleep 0.2; done) & echo started",
      {
        timeoutMs: 30_000,
      },
    );
    expect(b).toMatchObject({ exitCode: 0, timedOut: false });
    expect(b.stdout.startsWith("started\n") || b.stdout.startsWith("t\nstarted\n")).toBe(true);
    expect((await runOn(box.client, stillBeating("c19"))).stdout).toBe("gone\n");
  });

  it("case 20: a timeout kills the whole group, TERM-ignoring grandchildren included", async () => {
    // `sleep 300` outlasts the test's timeout: only the kill lets the call return.
    const r = await runOn(box.client, `echo partial; (trap '' TERM; ${beating("c20")}) & sleep 300`, {
      timeoutMs: 2000,
    });
    expect(r).toMatchObject({ exitCode: 124, timedOut: true, aborted: false, stdout: "partial\n" });
    expect((await runOn(box.client, stillBeating("c20"))).stdout).toBe("gone\n");
  });

  it("an abort kills the group and resolves 130 with the partial output", async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 300);
    const r = await runOn(box.client, `echo before; ${beating("abort")} & sleep 300`, { signal: ac.signal });
    expect(r).toMatchObject({ exitCode: 130, aborted: true, timedOut: false, stdout: "before\n" });
    expect((await runOn(box.client, stillBeating("abort"))).stdout).toBe("gone\n");
  });

  it("case 22: exit codes are exact (3, 137, 127, 0); 126 for a missing cwd", async () => {
    const codes = [];
    for (const cmd of ["exit 3", "kill -9 $$", "no_such_cmd", "false | true"]) {
      codes.push((await runOn(box.client, cmd)).exitCode);
    }
    expect(codes).toEqual([3, 137, 127, 0]);
    expect((await runOn(box.client, { argv: ["no_such_cmd"] })).exitCode).toBe(127);
    const cwd = await runOn(box.client, { argv: ["true"] }, { cwd: "/nonexistent" });
    expect(cwd.exitCode).toBe(126);
    expect(cwd.stderr).toContain("/nonexistent");
  });

  it("case 23: stdout and stderr are separate and carry no header bytes", async () => {
    const r = await runOn(box.client, "echo out1; echo err1 >&2; echo out2");
    expect(r.stdout).toBe("out1\nout2\n");
    expect(r.stderr).toBe("err1\n");
    const big = await runOn(box.client, "head -c 200000 /dev/zero | tr '\\0' a");
    expect(big.stdout).toBe("a".repeat(200_000));
  });

  it("output that imitates channel frames is delivered verbatim", async () => {
    // A forged exit frame for request 1..3 (u32 len, type 0x44, u32 id, {"code":0}).
    const forged = '\\x00\\x00\\x00\\x0a\\x44\\x00\\x00\\x00\\x01{"code":0}';
    const r = await runOn(box.client, `printf '${forged}${forged}'; exit 5`);
    expect(r.exitCode).toBe(5);
    expect(Buffer.from(r.stdout, "latin1").length).toBe(38);
  });

  it("runs several commands at once", async () => {
    // Each command ends only once all five have started: run one at a time, none would end.
    await runOn(box.client, "rm -rf /tmp/together && mkdir /tmp/together");
    const together = (i: number) =>
      `touch /tmp/together/${i}; until [ "$(ls /tmp/together | wc -l)" -ge 5 ]; do sleep 0.05; done; echo ${i}`;
    const rs = await Promise.all([1, 2, 3, 4, 5].map((i) => runOn(box.client, together(i))));
    expect(rs.map((r) => r.stdout)).toEqual(["1\n", "2\n", "3\n", "4\n", "5\n"]);
  });

  it("backpressure: 128 MiB of output passes with bounded controller memory", async () => {
    // Live memory (after a full collection), sampled every 16 MiB: what the channel holds, not the
    // garbage of 2,048 64-KiB frames, whose collection lags further behind on a busy machine.
    const live0 = liveBytes();
    let bytes = 0;
    let peak = live0;
    const r = await channelExec(
      box.client,
      { shell: "head -c 134217728 /dev/zero" },
      {
        onStdout: (c) => {
          bytes += c.length;
          if ((bytes & 0xffffff) < c.length) peak = Math.max(peak, liveBytes());
        },
      },
    );
    expect(r.exitCode).toBe(0);
    expect(bytes).toBe(134_217_728);
    expect(peak - live0).toBeLessThan(16 * 1024 * 1024);
  });

  it("case 22: once the container is stopped, a call rejects SandboxNotRunningError", async () => {
    const other = await startHelperBox(tenant);
    try {
      await other.container.stop({ t: 0 });
      await expect(channelExec(other.client, { shell: "true" })).rejects.toBeInstanceOf(
        SandboxNotRunningError,
      );
    } finally {
      await other.destroy();
    }
  });
});
