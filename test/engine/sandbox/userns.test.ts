/**
 * No sandbox makes a user namespace, on runc or on gVisor (issue 37 item 9). Under runsc
 * (Debian's, the engine's `runsc` runtime) `unshare -U` and clone(CLONE_NEWUSER) succeeded before
 * helper version 7: gVisor does not load Docker's seccomp profile, which refuses them under runc.
 * Now warden-helper's own filter (images/sandbox/helper/userns.go) refuses them to every command
 * of the channel, on both runtimes. The docker-exec path runs commands with `docker exec`, outside
 * the helper: runc's default seccomp profile refuses them there, and under runsc, which would not,
 * that path is refused, asked for or as the fallback when no helper starts (src/sandbox/docker/prepare.ts).
 */
import { execa } from "execa";
import { afterAll, describe, expect, it } from "vitest";
import { createSandbox } from "../../../src/sandbox/index.js";
import type { Sandbox } from "../../../src/sandbox/types.js";
import { TEST_IMAGE } from "../../helpers/backend.js";
import { describeEngine } from "../../helpers/engine.js";
import { leftovers, run, testTenant } from "../../helpers/sandbox-fixture.js";
import { expectNoUserNamespace } from "../../helpers/userns-probe.js";

const tenant = testTenant("userns");
/** src/sandbox/docker/prepare.ts's reason for refusing docker exec under runsc. */
const RUNSC_NEEDS_CHANNEL =
  "under gVisor (runtime \"runsc\") commands run only through warden-helper's channel: a command that docker exec starts runs outside the helper's seccomp filter, and gVisor loads no container seccomp profile, so it could make a user namespace";

describeEngine("DockerSandbox: no user namespaces", () => {
  const sandboxes: Sandbox[] = [];
  afterAll(async () => {
    for (const s of sandboxes) await s.destroy();
    expect(await leftovers(tenant)).toEqual([]);
  });

  for (const runtime of ["runc", "runsc"] as const) {
    describe(`on ${runtime}`, () => {
      it("unshare -Urm, unshare -U, clone/unshare(CLONE_NEWUSER) and setns fail with EPERM, clone3 with ENOSYS; threads still start", async () => {
        const sandbox = await createSandbox({
          tenant,
          runtime,
          execPath: "channel",
          ...(TEST_IMAGE ? { image: TEST_IMAGE } : {}),
        });
        sandboxes.push(sandbox);
        expect(sandbox.info.execPath).toBe("channel");
        if (runtime === "runsc") expect((await run(sandbox, "dmesg")).stdout).toContain("gVisor");
        await expectNoUserNamespace(sandbox);
      });
    });
  }

  it("on runc the docker-exec path is refused too (Docker's default seccomp profile)", async () => {
    const sandbox = await createSandbox({
      tenant,
      execPath: "docker-exec",
      ...(TEST_IMAGE ? { image: TEST_IMAGE } : {}),
    });
    sandboxes.push(sandbox);
    expect(await run(sandbox, "unshare -U true")).toMatchObject({
      exitCode: 1,
      stderr: "unshare: unshare failed: Operation not permitted\n",
    });
  });

  it("on runsc the docker-exec path is refused, asked for or as the fallback of a helper that does not start; nothing is left", async () => {
    const image = TEST_IMAGE ?? "warden-sandbox:latest";
    const before = await leftovers(tenant);
    await expect(createSandbox({ tenant, runtime: "runsc", execPath: "docker-exec", image })).rejects.toThrow(
      `execPath "docker-exec" is refused: ${RUNSC_NEEDS_CHANNEL}; use execPath "channel" (the default).`,
    );
    // An image whose helper label names a program that is no helper: no channel starts.
    const broken = `warden-test-broken-helper:${process.pid}`;
    await execa("docker", ["build", "-q", "-t", broken, "-"], {
      input: `FROM ${image}\nLABEL io.warden.helper=/bin/false\n`,
    });
    try {
      await expect(createSandbox({ tenant, runtime: "runsc", image: broken })).rejects.toThrow(
        new RegExp(
          `^warden-helper did not start in the sandbox \\(.+\\), and ${RUNSC_NEEDS_CHANNEL.replace(/[()]/g, "\\$&")}; rebuild the image \\(npm run images\\) or check its helper \\(io\\.warden\\.helper label\\)\\.$`,
        ),
      );
    } finally {
      await execa("docker", ["image", "rm", broken]);
    }
    expect(await leftovers(tenant)).toEqual(before);
  });
});
