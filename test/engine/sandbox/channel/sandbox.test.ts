/** createSandbox's exec path: the channel by default, docker exec on request, the helper copied into other images, and the logged fallback. */
import { afterAll, expect, it } from "vitest";
import { createSandbox, getDocker } from "../../../../src/sandbox/index.js";
import { channelTenant } from "../../../helpers/channel-fixture.js";
import { describeEngine } from "../../../helpers/engine.js";
import { leftovers, run } from "../../../helpers/sandbox-fixture.js";

const tenant = channelTenant("sandbox");

describeEngine("createSandbox exec path", () => {
  afterAll(async () => {
    expect(await leftovers(tenant)).toEqual([]);
  });

  it("uses the channel by default and docker exec when asked", async () => {
    await using fast = await createSandbox({ tenant });
    await using slow = await createSandbox({ tenant, execPath: "docker-exec" });
    expect(fast.info.execPath).toBe("channel");
    expect(slow.info.execPath).toBe("docker-exec");
    const main = async (id: string) => (await getDocker().getContainer(id).inspect()).Path;
    expect(await main(fast.info.containerId)).toBe("/usr/local/libexec/warden/warden-helper");
    expect(await main(slow.info.containerId)).toBe("sleep");
    expect((await run(fast, "echo hi")).stdout).toBe("hi\n");
  });

  it("rejects an unknown exec path", async () => {
    await expect(createSandbox({ tenant, execPath: "ssh" as never })).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
      message: 'execPath must be "channel" or "docker-exec", got "ssh".',
    });
  });

  it("copies the helper into an image warden did not build", async () => {
    await using sb = await createSandbox({ tenant, image: "debian:bookworm-slim" });
    expect(sb.info.execPath).toBe("channel");
    const r = await run(sb, "id -u; cat /proc/1/cmdline | tr '\\0' ' '");
    // PID 1 is the helper itself (no docker-init), serving through its `--serve` child.
    expect(r.stdout).toBe(`${sb.info.uid}\n/opt/warden-helper/warden-helper `);
  });

  it("falls back to docker exec with a logged reason when the helper cannot start", async () => {
    const docker = getDocker();
    const image = `warden-test-broken-helper:${tenant}`;
    const base = await docker.createContainer({
      Image: "warden-sandbox:latest",
      Labels: { "io.warden.tenant": tenant },
    });
    const warnings: string[] = [];
    const onWarning = (w: Error & { code?: string }) => {
      if (w.code === "WARDEN_HELPER_FALLBACK") warnings.push(w.message);
    };
    process.on("warning", onWarning);
    try {
      await base.commit({
        repo: image.split(":")[0],
        tag: tenant,
        // The image's own helper label wins over the sealed one it inherits.
        changes: ["LABEL io.warden.helper=/usr/bin/false"],
      });
      await using sb = await createSandbox({ tenant, image });
      expect(sb.info.execPath).toBe("docker-exec");
      expect((await run(sb, "echo still works")).stdout).toBe("still works\n");
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(
        /warden-helper unavailable \(container exited with code 1\); using docker exec\.$/,
      );
    } finally {
      process.off("warning", onWarning);
      await base.remove({ force: true });
      await docker
        .getImage(image)
        .remove({ force: true })
        .catch(() => {});
    }
  });
});
