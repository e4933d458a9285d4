/**
 * No sandbox Pod makes a user namespace, on the node's runc or on RuntimeClass gvisor (issue 37
 * item 9): under gVisor, which loads no container seccomp profile (so not the Pod's
 * RuntimeDefault), `unshare -Urm` got every capability inside and mounted a tmpfs before helper
 * version 7; warden-helper's channel now refuses it to every command (images/sandbox/helper/userns.go).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { createKubernetesSandbox, type KubernetesSandbox } from "../../src/sandbox/kubernetes/index.js";
import { TEST_IMAGE } from "../helpers/backend.js";
import { describeK8sOn, podLeftovers, testCluster } from "../helpers/k8s.js";
import { run } from "../helpers/sandbox-fixture.js";
import { expectNoUserNamespace } from "../helpers/userns-probe.js";

const TENANT = `test-k8s-userns-${process.pid}`;

for (const runtimeClass of [undefined, "gvisor"]) {
  describeK8sOn(
    runtimeClass,
    `Kubernetes sandbox on ${runtimeClass ?? "the node's default runtime"}: no user namespaces`,
    () => {
      let sandbox: KubernetesSandbox;

      beforeAll(async () => {
        sandbox = await createKubernetesSandbox(
          { tenant: TENANT, ...(TEST_IMAGE ? { image: TEST_IMAGE } : {}) },
          testCluster(runtimeClass),
        );
      });

      afterAll(async () => {
        await sandbox?.destroy();
        expect(await podLeftovers(TENANT)).toEqual([]);
      });

      it("unshare -Urm, unshare -U, clone/unshare(CLONE_NEWUSER) and setns fail with EPERM, clone3 with ENOSYS; threads still start", async () => {
        const kernel = (await run(sandbox, "dmesg 2>/dev/null | head -n 1")).stdout;
        expect(kernel.includes("gVisor")).toBe(runtimeClass === "gvisor");
        await expectNoUserNamespace(sandbox);
      });
    },
  );
}
