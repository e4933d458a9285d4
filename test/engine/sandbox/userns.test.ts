/**
 * No sandbox makes a user namespace, on runc or on gVisor (issue 37 item 9). Under runsc
 * (Debian's, the engine's `runsc` runtime) `unshare -U` and clone(CLONE_NEWUSER) succeeded before
 * helper version 7: gVisor does not load Docker's seccomp profile, which refuses them under runc.
 * Now warden-helper's own filter (images/sandbox/helper/userns.go) refuses them to every command
 * of the channel, on both runtimes.
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
});
