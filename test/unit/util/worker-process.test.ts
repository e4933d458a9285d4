/** The worker process itself: no server environment reaches it, and it exits when its channel closes. */
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { refWorkerProcess, startWorkerProcess } from "../../../src/util/worker-process.js";

const SOURCE = `
parentPort.on("message", () => parentPort.postMessage({ env: process.env, title: process.title }));
`;

describe("startWorkerProcess", () => {
  it("starts a process named warden-worker with none of this process's environment", async () => {
    process.env.WARDEN_TEST_SECRET = "not for workers";
    try {
      const { child } = startWorkerProcess(SOURCE, 64);
      refWorkerProcess(child);
      child.send("go");
      const [reply] = (await once(child, "message")) as [{ env: Record<string, string>; title: string }];
      expect(reply.title).toBe("warden-worker");
      expect(Object.keys(reply.env).filter((k) => !k.startsWith("NODE_CHANNEL_"))).toEqual([]);
      child.kill("SIGKILL");
      await once(child, "close");
    } finally {
      delete process.env.WARDEN_TEST_SECRET;
    }
  });

  it("exits by itself when its IPC channel closes (as when the server exits or dies)", async () => {
    const { child } = startWorkerProcess(SOURCE, 64);
    refWorkerProcess(child);
    child.send("go");
    await once(child, "message");
    child.disconnect();
    const [code, signal] = await once(child, "exit");
    expect({ code, signal }).toEqual({ code: 0, signal: null });
  });
});
