/**
 * What the docker-exec path sends when a timeout or abort stops a command: a second exec of the
 * kill script aimed at the command's own process group, with the shared 500 ms grace (in the
 * script's unit, tenths of a second). Against a fake container that records each exec's Cmd; the
 * kill itself is tested against the engine (test/engine/sandbox-exec.test.ts).
 */
import { PassThrough } from "node:stream";
import type Docker from "dockerode";
import { describe, expect, it } from "vitest";
import { execInContainer } from "../../../../../src/sandbox/docker/exec/exec.js";

/** A container whose first exec runs until a second exec (the killer) is created. */
function fakeContainer(): { container: Docker.Container; cmds: string[][] } {
  const cmds: string[][] = [];
  let main: PassThrough | undefined;
  const container = {
    id: "fake-container",
    exec: async (opts: { Cmd: string[] }) => {
      cmds.push(opts.Cmd);
      const stream = new PassThrough();
      const isKiller = cmds.length > 1;
      if (isKiller) {
        setImmediate(() => {
          stream.end();
          main?.end(); // the group got TERM: the command's stream ends
        });
      } else main = stream;
      return {
        start: async () => stream,
        inspect: async () => ({ Running: !stream.writableEnded, ExitCode: isKiller ? 0 : 143 }),
      };
    },
    inspect: async () => ({ State: { Running: true, Paused: false } }),
  };
  return { container: container as unknown as Docker.Container, cmds };
}

describe("docker-exec path: stopping a command", () => {
  it("on timeout sends the kill script for the command's group with a 500 ms grace, and reports 124", async () => {
    const { container, cmds } = fakeContainer();
    const result = await execInContainer(container, { argv: ["sleep", "9"] }, { timeoutMs: 20 });
    expect(result).toMatchObject({ exitCode: 124, timedOut: true, aborted: false });
    const [run, kill] = cmds;
    expect(kill?.[3]).toBe("warden-kill");
    expect(kill?.[4]).toBe(run?.[4]); // the pgid file the wrapper of this command writes
    expect(kill?.[5]).toBe("5"); // tenths of a second: 500 ms
  });

  it("on abort sends the same kill and reports 130", async () => {
    const { container, cmds } = fakeContainer();
    const stop = new AbortController();
    const pending = execInContainer(container, { shell: "sleep 9" }, { signal: stop.signal });
    setTimeout(() => stop.abort(), 20);
    expect(await pending).toMatchObject({ exitCode: 130, timedOut: false, aborted: true });
    expect(cmds[1]?.slice(3)).toEqual(["warden-kill", cmds[0]?.[4], "5"]);
  });
});
