/**
 * The Kubernetes channel is a pods/exec stream running `warden-helper --channel` (PID 1 is the
 * idle `--init`): the same protections as the Docker channel (test/engine/sandbox/channel/
 * forgery.test.ts), one channel per Pod at a time, and nothing left running when the channel's
 * stream ends (images/sandbox/helper/channel.go).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { type ChannelClient, channelExec } from "../../src/sandbox/channel/index.js";
import {
  connectHelper,
  createKubernetesSandbox,
  type KubernetesSandbox,
  podExec,
} from "../../src/sandbox/kubernetes/index.js";
import { TEST_IMAGE } from "../helpers/backend.js";
import { ATTACK_REFUSED, ATTACK_REFUSED_UNDER_GVISOR, attackNow } from "../helpers/channel-attack.js";
import { describeK8s, podLeftovers, TEST_RUNTIME_CLASS, testCluster } from "../helpers/k8s.js";
import { run } from "../helpers/sandbox-fixture.js";
import { beating, stillBeating } from "../helpers/survivors.js";

const TENANT = `test-k8s-chan-${process.pid}`;

/** Runs bash `script` over a bare channel client; resolves with its stdout. */
async function bashOn(client: ChannelClient, script: string): Promise<string> {
  const out: Buffer[] = [];
  await channelExec(client, { argv: ["bash", "-c", script] }, { onStdout: (c) => out.push(c) });
  return Buffer.concat(out).toString("utf8");
}

describeK8s("Kubernetes exec channel: protected, one at a time, nothing left when it ends", () => {
  const cluster = testCluster();
  let sandbox: KubernetesSandbox;
  let pod: string;
  const clients: ChannelClient[] = [];

  beforeAll(async () => {
    sandbox = await createKubernetesSandbox(
      { tenant: TENANT, ...(TEST_IMAGE ? { image: TEST_IMAGE } : {}) },
      cluster,
    );
    pod = sandbox.info.containerId;
  });

  afterAll(async () => {
    for (const client of clients) client.close();
    await sandbox?.destroy();
    expect(await podLeftovers(TENANT)).toEqual([]);
  });

  // Refused on runc (Linux) and on this cluster's gvisor (runsc built from gvisor.dev/gvisor,
  // scripts/k8s/gvisor), where only the helper's fd directory lists; Debian 12's runsc 20221219
  // let it through (the Docker engine's: test/engine/sandbox/runsc.test.ts).
  it("a command cannot open PID 1's or the channel helper's fds; forged frames change nothing", async () => {
    const r = await run(sandbox, { argv: ["python3", "-c", attackNow(0)] });
    expect(r.stdout).toBe(TEST_RUNTIME_CLASS === "gvisor" ? ATTACK_REFUSED_UNDER_GVISOR : ATTACK_REFUSED);
    expect(r.stderr).toBe("");
    expect(r.exitCode).toBe(3);
  });

  it("a second channel replaces the first: the first's stream ends and its command is killed", async () => {
    // Caught at once: the first channel may end before connectHelper below resolves.
    const first = sandbox
      .exec({ argv: ["bash", "-c", `${beating("first")} & sleep 600`] })
      .catch((err: Error) => err);
    // The command runs (its beat is seen) before the second channel opens.
    expect((await podExec(cluster, pod, ["bash", "-c", "sleep 0.5; test -e /tmp/beat-first"])).exitCode).toBe(
      0,
    );
    const second = await connectHelper(cluster, pod);
    clients.push(second);
    expect(await first).toMatchObject({ code: "SANDBOX_NOT_RUNNING" });
    expect(await bashOn(second, stillBeating("first"))).toBe("gone\n");
    expect(await bashOn(second, "echo served")).toBe("served\n");
  });

  it("closing the channel's stream stops the command it runs", async () => {
    const channel = await connectHelper(cluster, pod);
    clients.push(channel);
    const running = bashOn(channel, `${beating("eof")} & sleep 600`).catch((err: Error) => err);
    expect((await podExec(cluster, pod, ["bash", "-c", "sleep 0.5; test -e /tmp/beat-eof"])).exitCode).toBe(
      0,
    );
    channel.close();
    expect(await running).toMatchObject({ code: "SANDBOX_NOT_RUNNING" });
    // The end of the stream reaches the helper through the API server and the kubelet: allow 10 s.
    let beat = "";
    for (let i = 0; i < 20 && beat !== "gone\n"; i++)
      beat = (await podExec(cluster, pod, ["bash", "-c", stillBeating("eof")])).stdout;
    expect(beat).toBe("gone\n");
    // Only PID 1 (the idle init) and the asking exec's own processes are left.
    const ps = await podExec(cluster, pod, ["ps", "-eo", "pid=,args="]);
    expect(ps.stdout.trim().split("\n")[0]?.trim()).toBe("1 /usr/local/bin/warden-helper --init");
    expect(ps.stdout.trim().split("\n")).toHaveLength(2);
  });
});
