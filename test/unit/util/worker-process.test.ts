/** The worker process itself: no server environment reaches it, and it exits when its channel closes. */
import { once } from "node:events";
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { refWorkerProcess, startWorkerProcess, workerModule } from "../../../src/util/worker-process.js";

// Answers any job with its process's environment and title.
const MODULE = workerModule(import.meta.url, "fixtures/env-worker");

describe("startWorkerProcess", () => {
  it("starts a process named warden-worker with none of this process's environment", async () => {
    process.env.WARDEN_TEST_SECRET = "not for workers";
    try {
      const { child } = startWorkerProcess(MODULE, 64);
      refWorkerProcess(child);
      child.send("go");
      const [{ value: reply }] = (await once(child, "message")) as [
        { value: { env: Record<string, string>; title: string } },
      ];
      expect(reply.title).toBe("warden-worker");
      expect(Object.keys(reply.env).filter((k) => !k.startsWith("NODE_CHANNEL_"))).toEqual([]);
      child.kill("SIGKILL");
      await once(child, "close");
    } finally {
      delete process.env.WARDEN_TEST_SECRET;
    }
  });

  it("exits by itself when its IPC channel closes (as when the server exits or dies)", async () => {
    const { child } = startWorkerProcess(MODULE, 64);
    refWorkerProcess(child);
    child.send("go");
    await once(child, "message");
    child.disconnect();
    const [code, signal] = await once(child, "exit");
    expect({ code, signal }).toEqual({ code: 0, signal: null });
  });

  it("runs in a session of its own, whose scheduler autogroup is at nice 10 where the kernel groups by session", async () => {
    const { child } = startWorkerProcess(MODULE, 64);
    refWorkerProcess(child);
    try {
      child.send("go");
      await once(child, "message");
      // /proc/<pid>/stat after the name's ")": state, ppid, pgrp, session, …
      const [, , pgrp, session] = readFileSync(`/proc/${child.pid}/stat`, "utf8").split(") ")[1]!.split(" ");
      expect({ pgrp: Number(pgrp), session: Number(session) }).toEqual({
        pgrp: child.pid,
        session: child.pid,
      });
      const switchFile = "/proc/sys/kernel/sched_autogroup_enabled"; // absent without CONFIG_SCHED_AUTOGROUP
      const grouped = existsSync(switchFile) && readFileSync(switchFile, "utf8").trim() === "1";
      if (grouped) {
        // BOOT writes it at once, or after EAGAIN's 100 ms: wait for it (the test's timeout bounds this).
        let autogroup = readFileSync(`/proc/${child.pid}/autogroup`, "utf8").trim();
        while (!autogroup.endsWith(" nice 10")) {
          await new Promise((r) => setTimeout(r, 100));
          autogroup = readFileSync(`/proc/${child.pid}/autogroup`, "utf8").trim();
        }
        expect(autogroup).toMatch(/^\/autogroup-\d+ nice 10$/);
        expect(autogroup).not.toBe(readFileSync("/proc/self/autogroup", "utf8").trim());
      }
    } finally {
      child.kill("SIGKILL");
      await once(child, "close");
    }
  });
});

describe("workerModule", () => {
  it("names the worker module beside its user: the compiled .js in dist/, the .ts source under vitest", () => {
    expect(workerModule("file:///pkg/dist/util/line-diff.js", "line-diff-worker").href).toBe(
      "file:///pkg/dist/util/line-diff-worker.js",
    );
    expect(workerModule("file:///repo/src/util/line-diff.ts", "line-diff-worker").href).toBe(
      "file:///repo/src/util/line-diff-worker.ts",
    );
  });
});
