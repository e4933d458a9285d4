import { describe, expect, it } from "vitest";
import type { ChannelClient } from "../../../../src/sandbox/channel/index.js";
import { resolveSandboxOptions } from "../../../../src/sandbox/index.js";
import {
  finishPodSandbox,
  type KubernetesCluster,
  type PreparedPod,
  podSandboxInfo,
} from "../../../../src/sandbox/kubernetes/index.js";

const createdAt = new Date("2026-12-01T10:00:00.000Z");
const expiresAt = new Date("2026-12-01T11:00:00.000Z");

/** Whether the last infoOf's spare heartbeat was stopped by the hand-over. */
let spareBeatStopped = false;

/** A created Pod sandbox's info, with no workspace to copy in (no channel or API call). */
async function infoOf(cluster: KubernetesCluster, runtime: "runc" | "runsc") {
  const opts = await resolveSandboxOptions({ runtime }, "s1");
  // Open and quiet: the sandbox's heartbeat would ping it in 60 s; the sandbox is closed before.
  let closed = false;
  const channel = {
    get closed() {
      return closed;
    },
    lastTrafficAt: performance.now(),
    onClosed: () => {},
    close: () => {
      closed = true;
    },
  } as unknown as ChannelClient;
  spareBeatStopped = false;
  const heartbeat = {
    stop: () => {
      spareBeatStopped = true;
    },
  };
  const prepared: PreparedPod = {
    name: "warden-s1",
    channel,
    heartbeat,
    uid: 3000001,
    createdAt,
    expiresAt,
    opts,
  };
  const sandbox = await finishPodSandbox(cluster, prepared, opts);
  channel.close();
  return sandbox.info;
}

describe("a sandbox Pod's info", () => {
  it("names the Pods' RuntimeClass as its runtime, not the OCI runtime the options asked for", async () => {
    const gvisor = { namespace: "n", runtimeClassName: "gvisor" } as KubernetesCluster;
    expect((await infoOf(gvisor, "runc")).runtime).toBe("gvisor");
    expect((await infoOf(gvisor, "runsc")).runtime).toBe("gvisor");
    expect((await infoOf({ namespace: "n" } as KubernetesCluster, "runc")).runtime).toBe("default");
  });

  it("is the same for a created and an adopted Pod: copy mode, the channel, no network", async () => {
    const cluster = { namespace: "n", runtimeClassName: "kata" } as KubernetesCluster;
    const created = await infoOf(cluster, "runc");
    const fields = {
      sessionId: "s1",
      tenant: "local",
      image: created.image,
      createdAt,
      expiresAt,
      uid: 3000001,
    };
    expect(podSandboxInfo({ name: "warden-s1", ...fields }, cluster)).toEqual(created);
    expect(created).toEqual({
      ...fields,
      containerId: "warden-s1",
      runtime: "kata",
      workspaceMode: "copy",
      roots: ["/workspace"],
      execPath: "channel",
      channelTransport: "exec-stream",
      network: { mode: "none" },
    });
  });

  it("is handed over with the spare's own heartbeat stopped (the session's channel pings from then on)", async () => {
    await infoOf({ namespace: "n" } as KubernetesCluster, "runc");
    expect(spareBeatStopped).toBe(true);
  });
});
