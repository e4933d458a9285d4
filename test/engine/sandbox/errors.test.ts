/** Bad input and engine failures: each a WardenError naming the problem and the fix, nothing left behind. */

import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Docker from "dockerode";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createSandbox, getDocker } from "../../../src/sandbox/index.js";
import { describeEngine } from "../../helpers/engine.js";
import { EXEC_PATHS, leftovers, run, testTenant } from "../../helpers/sandbox-fixture.js";

const tenant = testTenant("errors");

describeEngine("DockerSandbox errors", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "warden-err-"));
    await writeFile(join(dir, "file.txt"), "x");
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
    expect(await leftovers(tenant)).toEqual([]);
  });

  it("a workspace that cannot be read is an INVALID_ARGUMENT about the directory, not the engine", async () => {
    // Paths below it are longer than PATH_MAX (4096), so the walk fails with ENAMETOOLONG: a host
    // read error, which used to be reported as ENGINE_UNREACHABLE (red team: ENOENT mid-swap).
    const deep = await mkdtemp(join(tmpdir(), "warden-deep-"));
    const name = "d".repeat(250);
    execFileSync("bash", [
      "-c",
      `cd "$1" && for i in $(seq 20); do mkdir "$2" && cd "$2"; done`,
      "_",
      deep,
      name,
    ]);
    try {
      await expect(createSandbox({ tenant, workspace: { hostPath: deep } })).rejects.toMatchObject({
        code: "INVALID_ARGUMENT",
        message: expect.stringMatching(
          new RegExp(
            `^workspace\\.hostPath ${deep} could not be read \\(ENAMETOOLONG: .*\\); it may have changed while it was read, send the request again\\.$`,
          ),
        ),
      });
    } finally {
      execFileSync("rm", ["-rf", deep]);
    }
  });

  it("rejects a missing or non-directory workspace, bad limits and mounts, naming the field", async () => {
    await expect(createSandbox({ tenant, workspace: { hostPath: join(dir, "nope") } })).rejects.toMatchObject(
      {
        code: "NOT_FOUND",
        message: `workspace.hostPath ${join(dir, "nope")} does not exist; pass an existing host directory.`,
      },
    );
    await expect(
      createSandbox({ tenant, workspace: { hostPath: join(dir, "file.txt") } }),
    ).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
      message: `workspace.hostPath ${join(dir, "file.txt")} is not a directory; pass a directory.`,
    });
    await expect(createSandbox({ tenant, limits: { memoryBytes: -1 } })).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
      message: "limits.memoryBytes must be a positive number, got -1; omit it for the default 1073741824.",
    });
    await expect(createSandbox({ tenant, limits: { cpus: Number.NaN } })).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
    });
    await expect(
      createSandbox({ tenant, mounts: [{ hostPath: dir, containerPath: "/workspace/x" }] }),
    ).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    await expect(createSandbox({ tenant: "bad tenant!" })).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
    });
  });

  it("names how to get a missing image that is not the default one, and the default", async () => {
    await expect(createSandbox({ tenant, image: "warden-no-such-image:latest" })).rejects.toMatchObject({
      code: "IMAGE_MISSING",
      message:
        "Sandbox image 'warden-no-such-image:latest' is not present. Pull it ('docker pull warden-no-such-image:latest') or build it; or leave out --image (the image option) to use warden-sandbox:latest, which 'warden images build' builds.",
    });
  });

  it("reports an unreachable engine with how to start one", async () => {
    const dead = new Docker({ socketPath: join(dir, "no-docker.sock") });
    await expect(createSandbox({ tenant }, dead)).rejects.toMatchObject({ code: "ENGINE_UNREACHABLE" });
    await expect(createSandbox({ tenant }, dead)).rejects.toThrow(/npm run engine/);
  });

  it("removes the partly created container and volume when creation fails or is aborted", async () => {
    // More CPUs than the host has: Docker refuses at container create, after the volume exists.
    await expect(createSandbox({ tenant, limits: { cpus: 512 } })).rejects.toMatchObject({
      code: "SANDBOX_ERROR",
    });
    expect(await leftovers(tenant)).toEqual([]);
    const aborted = new AbortController();
    aborted.abort();
    await expect(createSandbox({ tenant, signal: aborted.signal })).rejects.toMatchObject({
      name: "AbortError",
    });
    expect(await leftovers(tenant)).toEqual([]);
  });

  it.each(EXEC_PATHS)(
    "case 22: a stopped container gives SandboxNotRunningError, not success (%s)",
    async (execPath) => {
      await using sb = await createSandbox({ execPath, tenant });
      expect((await run(sb, "true")).exitCode).toBe(0);
      await getDocker().getContainer(sb.info.containerId).stop({ t: 0 });
      await expect(sb.exec({ shell: "true" })).rejects.toMatchObject({ code: "SANDBOX_NOT_RUNNING" });
      await expect(sb.stat("/workspace")).rejects.toMatchObject({ code: "SANDBOX_NOT_RUNNING" });
      await sb.destroy();
      await sb.destroy();
      await expect(sb.exec({ shell: "true" })).rejects.toMatchObject({ code: "SANDBOX_NOT_RUNNING" });
    },
  );
});
