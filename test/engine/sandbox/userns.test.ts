/**
 * No sandbox makes a user namespace, on runc or on gVisor (issue 37 item 9). Under runsc
 * (Debian's, the engine's `runsc` runtime) `unshare -U` and clone(CLONE_NEWUSER) succeeded before
 * helper version 7: gVisor does not load Docker's seccomp profile, which refuses them under runc.
 * Now warden-helper's own filter (images/sandbox/helper/userns.go) refuses them to every command
 * of the channel, on both runtimes. The docker-exec path (asked for with `execPath`, or the
 * fallback when no helper starts) runs commands with `docker exec`, outside the helper: runc's
 * default profile refuses them there, runsc does not (a known hole, asserted as such).
 */
import { afterAll, describe, expect, it } from "vitest";
import { createSandbox } from "../../../src/sandbox/index.js";
import type { Sandbox } from "../../../src/sandbox/types.js";
import { TEST_IMAGE } from "../../helpers/backend.js";
import { describeEngine } from "../../helpers/engine.js";
import { leftovers, run, testTenant } from "../../helpers/sandbox-fixture.js";
import { expectNoUserNamespace } from "../../helpers/userns-probe.js";

const tenant = testTenant("userns");

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

  it("KNOWN HOLE on runsc: a command of the docker-exec path (no helper filter) makes a user namespace", async () => {
    const sandbox = await createSandbox({
      tenant,
      runtime: "runsc",
      execPath: "docker-exec",
      ...(TEST_IMAGE ? { image: TEST_IMAGE } : {}),
    });
    sandboxes.push(sandbox);
    expect(await run(sandbox, "unshare -U sh -c 'id -u'")).toMatchObject({ exitCode: 0, stdout: "65534\n" });
  });
});
