/** The gVisor runtime (runsc), registered by scripts/ensure-docker.sh. */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, expect, it } from "vitest";
import { createSandbox, getDocker } from "../../../src/sandbox/index.js";
import type { Sandbox } from "../../../src/sandbox/types.js";
import { expectForgedUnderRunsc } from "../../helpers/channel-attack.js";
import { describeEngine } from "../../helpers/engine.js";
import { leftovers, run, testTenant } from "../../helpers/sandbox-fixture.js";

const tenant = testTenant("runsc");
const execFileAsync = promisify(execFile);

describeEngine("DockerSandbox on runsc", () => {
  let sandbox: Sandbox | undefined;
  afterAll(async () => {
    await sandbox?.destroy();
    expect(await leftovers(tenant)).toEqual([]);
  });

  it("runs commands under gVisor with no network", async () => {
    sandbox = await createSandbox({ tenant, runtime: "runsc" });
    expect(sandbox.info.runtime).toBe("runsc");
    const h = (await getDocker().getContainer(sandbox.info.containerId).inspect()).HostConfig;
    expect(h.Runtime).toBe("runsc");
    expect(h.NetworkMode).toBe("none");
    // gVisor refuses connect(2) to a host socket without --host-uds: the channel stays on the
    // attach stream, with no socket directory mounted and nothing said.
    expect(sandbox.info.channelTransport).toBe("attach");
    expect(h.Mounts?.map((m) => m.Target)).toEqual(["/workspace"]);
    const r = await run(sandbox, "echo hello; exit 4");
    expect(r).toMatchObject({ stdout: "hello\n", exitCode: 4 });
    const kernel = await run(sandbox, { argv: ["dmesg"] });
    expect(kernel.stdout).toContain("gVisor");
    await sandbox.writeFile("a.txt", Buffer.from("x\n"));
    expect((await sandbox.readFile("a.txt", { kind: "bytes", offset: 0, length: 10 })).data.toString()).toBe(
      "x\n",
    );
  });

  it("KNOWN HOLE under runsc 20221219: a command opens the channel helper's stdin/stdout (not-dumpable does not guard /proc/<pid>/fd there) and forges its call's result", async () => {
    // Its own container: the forgery leaves this one's channel corrupted.
    const victim = await createSandbox({ tenant, runtime: "runsc", execPath: "channel" });
    try {
      await expectForgedUnderRunsc(victim, 1, async (path) => {
        return (await execFileAsync("docker", ["exec", victim.info.containerId, "cat", path])).stdout;
      });
    } finally {
      await victim.destroy();
    }
  });
});
