/** openProcesses over a fake sandbox: what it tells the helper when a session is adopted. */
import { describe, expect, it } from "vitest";
import { openProcesses } from "../../../src/process/index.js";
import type { Sandbox, ShimRef } from "../../../src/sandbox/index.js";

function fakeSandbox(): { sandbox: Sandbox; kept: ShimRef[][] } {
  const kept: ShimRef[][] = [];
  const sandbox = {
    info: { sessionId: "s1", execPath: "channel" },
    processIO: {
      spawn: async () => ({ pid: 1, startTime: 1, commandPid: 2 }),
      keep: async (shims: readonly ShimRef[]) => {
        kept.push([...shims]);
        return { kept: [], killed: 0 };
      },
    },
  } as unknown as Sandbox;
  return { sandbox, kept };
}

describe("openProcesses", () => {
  it("names the recorded shims to the helper on adoption, also when there are none (attack-procs F4)", async () => {
    const { sandbox, kept } = fakeSandbox();
    await openProcesses(sandbox, { records: [] });
    await openProcesses(sandbox, {
      records: [
        {
          id: "p3",
          command: { argv: ["sleep", "9"] },
          cwd: "/workspace",
          shimPid: 40,
          shimStartTime: 123,
          commandPid: 41,
          startedAt: "2026-12-07T00:00:00.000Z",
        },
      ],
    });
    expect(kept).toEqual([[], [{ pid: 40, startTime: 123 }]]);
  });

  it("tells the helper nothing for a new session", async () => {
    const { sandbox, kept } = fakeSandbox();
    await openProcesses(sandbox);
    expect(kept).toEqual([]);
  });

  it("refuses a sandbox without the channel, naming its path", async () => {
    const sandbox = { info: { sessionId: "s2", execPath: "docker-exec" } } as unknown as Sandbox;
    await expect(openProcesses(sandbox)).rejects.toThrow(
      'Sandbox s2 cannot run background processes: they need warden\'s channel (execPath "channel"), and it uses "docker-exec"; start the session with the channel.',
    );
  });
});

describe("starts at once", () => {
  it("are counted one after another: the running limit holds for a batch of starts", async () => {
    let spawned = 0;
    const sandbox = {
      info: { sessionId: "s3", execPath: "channel" },
      processIO: {
        spawn: async () => {
          spawned++;
          return { pid: 100 + spawned, startTime: 1, commandPid: 200 + spawned };
        },
        keep: async () => ({ kept: [], killed: 0 }),
      },
      // Every shim runs (its /proc stat line names the start time 1); no output yet.
      readFile: async (path: string) => {
        const pid = /^\/proc\/(\d+)\/stat$/.exec(path)?.[1];
        if (!pid) throw new Error(`unexpected read of ${path}`);
        const stat = `${pid} (warden-helper) S 1 ${pid} ${pid} 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1 0 0`;
        return { data: Buffer.from(stat), totalBytes: stat.length };
      },
      listDir: async () => [],
    } as unknown as Sandbox;
    const processes = await openProcesses(sandbox, { limits: { maxRunning: 2 } });
    const outcomes = await Promise.allSettled(
      [1, 2, 3].map(() => processes.start({ command: { argv: ["sleep", "9"] } })),
    );
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "fulfilled", "rejected"]);
    expect(spawned).toBe(2);
  });
});
