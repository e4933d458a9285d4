import { EventEmitter } from "node:events";
import type { Readable, Writable } from "node:stream";
import type { Exec } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { encodeFrame, FrameDecoder, FrameType } from "../../../../src/sandbox/channel/protocol/frame.js";
import { connectHelper, type KubernetesCluster } from "../../../../src/sandbox/kubernetes/index.js";

/** A cluster whose exec API runs a fake helper that answers every ping with `version`. */
function clusterWithHelper(version: string) {
  const socket = Object.assign(new EventEmitter(), { closed: false, close: () => (socket.closed = true) });
  const exec = {
    exec: async (...args: unknown[]) => {
      const [stdout, , stdin] = args.slice(4, 7) as [Writable, Writable, Readable];
      const decoder = new FrameDecoder((frame) => {
        if (frame.type === FrameType.ping)
          stdout.write(
            encodeFrame(FrameType.pong, frame.id, Buffer.from(JSON.stringify({ version, pid: 7 }))),
          );
      });
      stdin.on("data", (chunk: Buffer) => decoder.push(chunk));
      return socket;
    },
  } as unknown as Exec;
  // The Pod's helper copy was chosen before (helper-copy.ts): no probe, only the handshake.
  const core = {
    readNamespacedPod: async () => ({ metadata: { annotations: { "io.warden.helper": "readable" } } }),
  };
  return { cluster: { namespace: "ns", exec, core } as unknown as KubernetesCluster, socket };
}

describe("connectHelper (the Kubernetes exec channel's handshake)", () => {
  it("connects to a helper of version 7, whose exec channel caps file sizes and refuses preallocation and user namespaces", async () => {
    const { cluster, socket } = clusterWithHelper("7");
    const client = await connectHelper(cluster, "pod-1");
    expect(client.closed).toBe(false);
    client.close();
    expect(socket.closed).toBe(true);
  });

  it.each([
    ["2", "it would neither replace a stale channel nor stop its commands"],
    ["3", "its commands could write without bound to the node's disk through /dev/termination-log"],
    ["4", "FS_IOC_RESVSP64 passed its filter, and its image has no execute-only copy"],
    [
      "6",
      "a command could make a user namespace under gVisor, and its image has no root-only termination message directory",
    ],
  ])("refuses a helper of version %s (%s), closing its stream", async (version) => {
    const { cluster, socket } = clusterWithHelper(version);
    await expect(connectHelper(cluster, "pod-1")).rejects.toThrow(
      `warden-helper in Pod ns/pod-1 is version ${version}; the Kubernetes backend needs version 7 or later (an exec-stream channel that caps file sizes and refuses the preallocation calls and user namespaces, an image whose termination message file (a file of the node's disk) no command can reach, and an execute-only copy that commands cannot trace): rebuild the image (warden images build) and load it into the cluster.`,
    );
    expect(socket.closed).toBe(true);
  });
});
