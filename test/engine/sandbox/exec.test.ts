/** Exec against a real engine: streaming, exit codes, process groups, timeout and abort (faults 19, 20, 22, 23). */
import { afterAll, beforeAll, expect, it } from "vitest";
import { createSandbox } from "../../../src/sandbox/index.js";
import type { Sandbox } from "../../../src/sandbox/types.js";
import { describeEngine } from "../../helpers/engine.js";
import { EXEC_PATHS, leftovers, run, testTenant } from "../../helpers/sandbox-fixture.js";
import { beating, stillBeating } from "../../helpers/survivors.js";

const tenant = testTenant("exec");

for (const execPath of EXEC_PATHS) {
  describeEngine(`DockerSandbox exec (${execPath})`, () => {
    let sandbox: Sandbox;
    beforeAll(async () => {
      sandbox = await createSandbox({ execPath, tenant });
    });
    afterAll(async () => {
      await sandbox?.destroy();
      expect(await leftovers(tenant)).toEqual([]);
    });

    it("runs an argv and a shell script with cwd /workspace by default", async () => {
      const r = await run(sandbox, { argv: ["pwd"] });
      expect(r).toMatchObject({
        exitCode: 0,
        stdout: "/workspace\n",
        stderr: "",
        timedOut: false,
        aborted: false,
      });
      const s = await run(sandbox, "cd /tmp && pwd; echo $0", { cwd: "/" });
      expect(s.stdout).toBe("/tmp\nbash\n");
    });

    it("sees only PATH, HOME, LANG and the env it was given", async () => {
      const r = await run(sandbox, { argv: ["env"] }, { env: { FOO: "bar baz" } });
      const names = r.stdout
        .trim()
        .split("\n")
        .map((l) => l.split("=")[0])
        .sort();
      expect(names).toEqual(["FOO", "HOME", "LANG", "PATH"]);
      expect(r.stdout).toContain("FOO=bar baz\n");
      expect(r.stdout).toContain("HOME=/home/sandbox\n");
    });

    it("case 19: a background child holding the output pipe does not hang the call", async () => {
      const a = await run(sandbox, `${beating("c19")} & echo done`, { timeoutMs: 30_000 });
      expect(a).toMatchObject({ exitCode: 0, stdout: "done\n", timedOut: false });
      const b = await run(
        sandbox,
        "(while :; do echo t; : > /tmp/beat-c19; sleep 0.2; done) & echo started",
        {
          timeoutMs: 30_000,
        },
      );
      expect(b.exitCode).toBe(0);
      expect(b.timedOut).toBe(false);
      expect(b.stdout.startsWith("started\n") || b.stdout.startsWith("t\nstarted\n")).toBe(true);
      // The background loops never end: had either call waited for them, it would have run into its
      // 30 s timeout (timedOut true), so returning untimed-out is the proof (no wall-clock bound).
      expect((await run(sandbox, stillBeating("c19"))).stdout).toBe("gone\n");
    });

    it("case 20: a timeout kills the whole group, TERM-ignoring grandchildren included", async () => {
      const r = await run(sandbox, `echo partial; (trap '' TERM; ${beating("c20")}) & sleep 300`, {
        timeoutMs: 2000,
      });
      expect(r).toMatchObject({ exitCode: 124, timedOut: true, aborted: false, stdout: "partial\n" });
      // `sleep 300` outlasts the test's timeout: only the kill lets the call return at all.
      expect((await run(sandbox, stillBeating("c20"))).stdout).toBe("gone\n");
    });

    it("a timeout gives a command that ignores TERM the 500 ms grace (KILL_GRACE_MS), then KILLs it", async () => {
      const r = await run(sandbox, `trap '' TERM; echo ready; ${beating("grace")} & sleep 300; echo never`, {
        timeoutMs: 1000,
      });
      expect(r).toMatchObject({ exitCode: 124, timedOut: true, stdout: "ready\n" });
      // TERM at 1000 ms does nothing; only the KILL sent 500 ms later ends it.
      expect(r.durationMs).toBeGreaterThanOrEqual(1450);
      expect((await run(sandbox, stillBeating("grace"))).stdout).toBe("gone\n");
    });

    it("abort kills the group and returns the partial output with 130", async () => {
      const controller = new AbortController();
      const chunks: string[] = [];
      const p = sandbox.exec(
        { shell: `echo first; ${beating("abort")} & sleep 60; echo never` },
        {
          signal: controller.signal,
          onStdout: (c) => {
            chunks.push(c.toString());
            controller.abort();
          },
        },
      );
      const r = await p;
      expect(r).toMatchObject({ exitCode: 130, aborted: true, timedOut: false });
      expect(chunks.join("")).toBe("first\n");
      expect((await run(sandbox, stillBeating("abort"))).stdout).toBe("gone\n");
    });

    it("case 22: exit codes are exact, signal deaths are 128+N", async () => {
      expect((await run(sandbox, "exit 3")).exitCode).toBe(3);
      expect((await run(sandbox, "kill -9 $$")).exitCode).toBe(137);
      const missing = await run(sandbox, "no_such_cmd");
      expect(missing.exitCode).toBe(127);
      expect(missing.stderr).toContain("no_such_cmd: command not found");
      expect((await run(sandbox, "false | true")).exitCode).toBe(0);
      expect((await run(sandbox, { argv: ["sh", "-c", "kill -TERM $$"] })).exitCode).toBe(143);
    });

    it("case 23: stdout and stderr are demuxed without frame headers", async () => {
      const r = await run(sandbox, "echo out1; echo err1 >&2; echo out2");
      expect(r.stdout).toBe("out1\nout2\n");
      expect(r.stderr).toBe("err1\n");
      const big = await run(sandbox, "head -c 200000 /dev/zero | tr '\\0' a");
      expect(big.stdout).toBe("a".repeat(200_000));
      expect(big.stdout.includes("\x01\x00\x00\x00")).toBe(false);
      expect(big.stdout.includes("\x02\x00\x00\x00")).toBe(false);
    });

    it("delivers output as it arrives, not at the end", async () => {
      // The command prints b only once a second call has made /tmp/go-arrive: seeing a before that
      // call (event-driven, no timing) shows output is delivered while the command runs.
      const seen: string[] = [];
      let sawA = () => {};
      const a = new Promise<void>((resolve) => {
        sawA = resolve;
      });
      const running = sandbox.exec(
        { shell: "rm -f /tmp/go-arrive; echo a; until [ -e /tmp/go-arrive ]; do sleep 0.05; done; echo b" },
        {
          onStdout: (chunk) => {
            seen.push(Buffer.from(chunk).toString());
            sawA();
          },
        },
      );
      await a;
      expect(seen.join("")).toBe("a\n");
      await run(sandbox, "touch /tmp/go-arrive");
      await running;
      expect(seen.join("")).toBe("a\nb\n");
    });

    it("rejects a bad command, env or timeout with InvalidArgumentError", async () => {
      await expect(sandbox.exec({ argv: [] })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
      await expect(sandbox.exec({ argv: ["true"] }, { env: { "A=B": "x" } })).rejects.toMatchObject({
        code: "INVALID_ARGUMENT",
      });
      await expect(sandbox.exec({ argv: ["true"] }, { timeoutMs: 0 })).rejects.toMatchObject({
        code: "INVALID_ARGUMENT",
      });
    });
  });
}
