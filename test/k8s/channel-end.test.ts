/**
 * A Kubernetes session whose channel's helper ended with an exit status (src/sandbox/kubernetes/
 * pod-channel.ts, channel-end.ts): every later call fails naming the Pod as namespace/name, why and
 * what to do, not Docker's "Sandbox container <12 chars> is not running.":
 * - the Pod deleted (as `kubectl delete pod` does: default grace, waits until it is gone): "is gone";
 * - the helper killed from inside (`kill -KILL $PPID`, `kill -9 -1`): the Pod still runs, is not
 *   re-opened and not deleted (another controller may hold it), until the session's own destroy;
 * - the Pod's PID 1 (the idle init) ended from inside (`kill -TERM 1`): the Pod is Succeeded, "has
 *   ended", the session is over; its destroy removes the Pod.
 * Found by an attack on the Kubernetes backend (issue 18): before, the first two gave "Sandbox
 * container warden-45210 is not running."; the third said "… while the Pod still runs: …" (a GET
 * made before the kubelet saw the container end, kept for every later call).
 */
import { afterAll, expect, it } from "vitest";
import {
  apiStatus,
  createKubernetesSandbox,
  type KubernetesSandbox,
} from "../../src/sandbox/kubernetes/index.js";
import { describeK8s, podLeftovers, removePods, TEST_NAMESPACE, testCluster } from "../helpers/k8s.js";

const TENANT = `test-k8s-end-${process.pid}`;

/** The message of `sandbox.exec(argv)`'s rejection, or "answered". */
const failure = (sandbox: KubernetesSandbox, argv: string[]) =>
  sandbox.exec({ argv }, { onStdout: () => {} }).then(
    () => "answered",
    (err: Error & { code?: string }) => `${err.code}: ${err.message}`,
  );

const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

describeK8s("Kubernetes session: its channel's helper ended", () => {
  const cluster = testCluster();
  afterAll(async () => {
    await removePods(TENANT);
    expect(await podLeftovers(TENANT)).toEqual([]);
  });

  it("a deleted Pod: every later call names it as namespace/name, says it is gone and to start a new session", async () => {
    const sandbox = await createKubernetesSandbox({ tenant: TENANT }, cluster);
    const pod = sandbox.info.containerId;
    await cluster.core.deleteNamespacedPod({ name: pod, namespace: TEST_NAMESPACE });
    for (let gone = false; !gone; await new Promise((r) => setTimeout(r, 200)))
      gone = await cluster.core.readNamespacedPod({ name: pod, namespace: TEST_NAMESPACE }).then(
        () => false,
        (err: unknown) => apiStatus(err) === 404,
      );
    const message = new RegExp(
      `^SANDBOX_NOT_RUNNING: the sandbox Pod ${literal(`${TEST_NAMESPACE}/${pod}`)} is gone: the API answers 404 \\(it no longer exists\\), as a GET of it said after its exec channel ended \\(the channel's helper in Pod ${literal(`${TEST_NAMESPACE}/${pod}`)} ended \\(.+\\)\\); what ran in it and its files are lost; start a new session, and DELETE this one\\.$`,
    );
    // The API may forget the Pod a moment before its exec stream ends: calls answer until then.
    const deadline = Date.now() + 60_000;
    let first = "answered";
    while (first === "answered" && Date.now() < deadline) {
      first = await failure(sandbox, ["echo", "next"]);
      if (first === "answered") await new Promise((r) => setTimeout(r, 200));
    }
    expect(first).toMatch(message);
    expect(await failure(sandbox, ["echo", "again"])).toMatch(message);
    await sandbox.destroy();
  });

  for (const command of ["kill -KILL $PPID", "kill -9 -1"])
    it(`\`${command}\` from inside: every later call names the Pod and both causes; the Pod keeps running until the session's destroy`, async () => {
      const sandbox = await createKubernetesSandbox({ tenant: TENANT }, cluster);
      const pod = sandbox.info.containerId;
      const where = literal(`${TEST_NAMESPACE}/${pod}`);
      const message = new RegExp(
        `^SANDBOX_NOT_RUNNING: the exec channel to Pod ${where} ended \\(the channel's helper in Pod ${where} ended \\(.+; killed by signal 9, SIGKILL\\)\\) while the Pod still runs: ` +
          "a command in the sandbox may have killed the channel's helper \\(e\\.g\\. kill -9 -1\\), or another warden controller took the Pod over; " +
          "the channel is not re-opened, so two controllers never take a Pod from each other, and the Pod is left running for whoever holds it; " +
          "start a new session, and DELETE this one \\(deleting it deletes the Pod\\)\\.$",
      );
      expect(await failure(sandbox, ["bash", "-c", `${command}; sleep 5`])).toMatch(message);
      for (const call of ["next", "again"]) expect(await failure(sandbox, ["echo", call])).toMatch(message);
      const read = await cluster.core.readNamespacedPod({ name: pod, namespace: TEST_NAMESPACE });
      expect([read.status?.phase, read.metadata?.deletionTimestamp]).toEqual(["Running", undefined]);
      await sandbox.destroy();
      expect(await podLeftovers(TENANT)).toEqual([]);
    });

  it("`kill -TERM 1` from inside: the Pod ended (Succeeded); every later call says so, not that it still runs; the destroy removes it", async () => {
    const sandbox = await createKubernetesSandbox({ tenant: TENANT }, cluster);
    const pod = sandbox.info.containerId;
    const where = literal(`${TEST_NAMESPACE}/${pod}`);
    const message = (phase: string) =>
      new RegExp(
        `^SANDBOX_NOT_RUNNING: the sandbox Pod ${where} has ended: its phase is ${phase}, its container terminated \\(reason Completed, exit code 0\\), ` +
          `as a GET of it said after its exec channel ended \\(the channel's helper in Pod ${where} ended \\(.+\\)\\); ` +
          "a container ends when its PID 1 \\(warden-helper --init\\) exits \\(a command in the sandbox can make it: e\\.g\\. kill -TERM 1\\) or is killed \\(e\\.g\\. out of memory\\); " +
          "this session is over, what ran in it and its files are lost; start a new session, and DELETE this one\\.$",
      );
    const first = await failure(sandbox, [
      "bash",
      "-c",
      "printf X > /dev/termination-log; kill -TERM 1; sleep 5",
    ]);
    // The kubelet shows the container's end ~0.7 s after the stream's, the phase ~1.8 s after (test node).
    expect(first).toMatch(message("(Running|Succeeded)"));
    for (const call of ["next", "again"]) {
      const later = await failure(sandbox, ["echo", call]);
      expect(later).toMatch(message("Succeeded"));
      expect(later).not.toContain("while the Pod still runs");
    }
    const read = await cluster.core.readNamespacedPod({ name: pod, namespace: TEST_NAMESPACE });
    expect(read.status?.phase).toBe("Succeeded");
    await sandbox.destroy();
    expect(await podLeftovers(TENANT)).toEqual([]);
  });
});
