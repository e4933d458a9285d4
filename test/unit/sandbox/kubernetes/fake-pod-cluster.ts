/**
 * The fake cluster of the PodChannel unit tests (pod-channel.test.ts, pod-channel-end.test.ts): an
 * in-memory helper behind each pods/exec stream, and Pod reads the test sets.
 */

import { EventEmitter } from "node:events";
import type { Readable, Writable } from "node:stream";
import {
  type ConfigurationOptions,
  type Exec,
  HttpMethod,
  RequestContext,
  type V1Pod,
  type V1Status,
} from "@kubernetes/client-node";
import { expect } from "vitest";
import { channelExec } from "../../../../src/sandbox/channel/protocol/exec.js";
import { encodeFrame, FrameDecoder, FrameType } from "../../../../src/sandbox/channel/protocol/frame.js";
import type { ChannelEvent } from "../../../../src/sandbox/index.js";
import {
  connectHelper,
  EXEC_CHANNEL_VERSION,
  type KubernetesCluster,
  loadKubernetesClient,
  PodChannel,
  requestTimeoutError,
} from "../../../../src/sandbox/kubernetes/index.js";

// readPodWithin's deadline is client-node middleware (request-deadline.ts): the client is loaded on demand.
await loadKubernetesClient();

export const FAST = { attempts: 3, firstDelayMs: 10, maxDelayMs: 20 };
/** A helper's end settles within 200 ms here (channel-end.ts; 3 s by default). */
export const SETTLE = { windowMs: 200, everyMs: 10, reuseMs: 100 };
export const RUNNING: V1Pod = {
  status: { phase: "Running", containerStatuses: [{ state: { running: {} } } as never] },
};

/**
 * A cluster whose pods/exec runs an in-memory helper per stream: it answers pings, runs `echo`
 * (stdout + exit 0) and leaves `sleep` running. `pod` is what readNamespacedPod returns (null: 404),
 * after the Pods queued in `nextPods` (one a read); `refuse` makes new exec streams fail.
 */
export function fakeCluster(heartbeatMs = 60_000) {
  const sockets: Array<EventEmitter & { close(): void }> = [];
  const statuses: Array<(s: V1Status) => void> = [];
  const state = {
    pod: RUNNING as V1Pod | null,
    nextPods: [] as Array<V1Pod | null>,
    /** GETs of the Pod so far. */
    reads: 0,
    refuse: false,
    events: [] as ChannelEvent[],
    /** argv of every exec request the helpers got over their channels, in order. */
    execs: [] as string[][],
    /** Pings each stream's helper got, and whether it answers them. */
    pings: [] as number[],
    mute: false,
    /** argv of every exec; whether the execute-only copy's `--version` fails (gVisor). */
    commands: [] as string[][],
    sealedFails: false,
    /** Whether the API refuses the `--version` probe's exec (no exit status at all). */
    probeBreaks: false,
    /** Bodies of every Pod patch (the helper copy's annotation). */
    patches: [] as unknown[],
    /** Whether GETs of the Pod never answer (a hung API connection). */
    hang: false,
  };
  const exec = {
    exec: async (...args: unknown[]) => {
      if (state.refuse) throw new Error("connect ECONNREFUSED 127.0.0.1:6443");
      const [stdout, , stdin] = args.slice(4, 7) as [Writable, Writable, Readable];
      state.commands.push(args[3] as string[]);
      if ((args[3] as string[])[1] === "--version") {
        if (state.probeBreaks) throw new Error("websocket: bad handshake");
        return versionProbe(stdout, args[8], state.sealedFails);
      }
      statuses.push(args[8] as (s: V1Status) => void);
      const socket = Object.assign(new EventEmitter(), { close: () => socket.emit("close", 1000) });
      const n = state.pings.push(0) - 1;
      // Asynchronously, as over a real stream.
      const reply = (type: number, id: number, body: string) =>
        setImmediate(() => stdout.write(encodeFrame(type as never, id, Buffer.from(body))));
      const decoder = new FrameDecoder((frame) => {
        if (frame.type === FrameType.ping) {
          state.pings[n] = (state.pings[n] ?? 0) + 1;
          if (!state.mute || n > 0)
            reply(
              FrameType.pong,
              frame.id,
              JSON.stringify({ version: String(EXEC_CHANNEL_VERSION), pid: 7 }),
            );
        }
        if (frame.type !== FrameType.exec) return;
        const argv = (JSON.parse(frame.payload.toString()) as { argv: string[] }).argv;
        state.execs.push(argv);
        if (argv[0] !== "echo") return;
        reply(FrameType.stdout, frame.id, `${argv.slice(1).join(" ")}\n`);
        reply(FrameType.exit, frame.id, '{"code":0}');
      });
      stdin.on("data", (chunk: Buffer) => decoder.push(chunk));
      sockets.push(socket);
      return socket;
    },
  } as unknown as Exec;
  const core = {
    readNamespacedPod: async (req: { name: string; namespace: string }, options?: ConfigurationOptions) => {
      state.reads++;
      if (state.hang) return unanswered(`/api/v1/namespaces/${req.namespace}/pods/${req.name}`, options);
      const pod = state.nextPods.length > 0 ? state.nextPods.shift() : state.pod;
      if (pod) return pod;
      throw Object.assign(new Error("pods not found"), { code: 404 });
    },
    patchNamespacedPod: async (req: { body: unknown }) => {
      state.patches.push(req.body);
      return state.pod;
    },
  };
  const cluster = {
    namespace: "ns",
    exec,
    core,
    heartbeatMs,
    onChannelEvent: (e: ChannelEvent) => state.events.push(e),
  } as unknown as KubernetesCluster;
  /** Cuts the newest exec stream the way a dropped connection does (code 1006). */
  const cut = () => sockets.at(-1)?.emit("close", 1006);
  /** The newest stream's helper is killed (by a newer channel): the API's exit status, then the close. */
  const helperKilled = () => {
    statuses.at(-1)?.({ status: "Failure", message: "command terminated with non-zero exit code: 137" });
    sockets.at(-1)?.emit("close", 1000);
  };
  return { cluster, state, sockets, cut, helperKilled };
}

/**
 * A GET the API server never answers: the call's own deadline middleware (readPodWithin's
 * requestDeadline) runs on it, and it rejects as the clients do once the deadline passes.
 */
async function unanswered(path: string, options?: ConfigurationOptions): Promise<never> {
  let request = new RequestContext(`https://api.invalid${path}`, HttpMethod.GET);
  for (const middleware of options?.middleware ?? []) request = await middleware.pre(request).toPromise();
  const signal = request.getSignal();
  return new Promise((_, reject) =>
    signal?.addEventListener("abort", () => reject(requestTimeoutError(request) ?? signal.reason)),
  );
}

/**
 * The exec of `<sealed helper> --version` before each channel (start-pod.ts): prints the version the
 * backend needs (EXEC_CHANNEL_VERSION), exits 0;
 * with `fails`, the runtime refuses to load it (gVisor's message, no exit code).
 */
export function versionProbe(stdout: Writable, onStatus: unknown, fails: boolean) {
  const socket = Object.assign(new EventEmitter(), { close: () => {} });
  setImmediate(() => {
    if (!fails) stdout.write(`${EXEC_CHANNEL_VERSION}\n`);
    (onStatus as (s: V1Status) => void)(
      fails ? { status: "Failure", message: "failed to load: permission denied" } : { status: "Success" },
    );
    socket.emit("close", 1000);
  });
  return socket;
}

export async function open(
  fake: ReturnType<typeof fakeCluster>,
  podReadTimeoutMs?: number,
  settle: typeof SETTLE = SETTLE,
) {
  const client = await connectHelper(fake.cluster, "warden-s1");
  return new PodChannel(fake.cluster, "warden-s1", client, {
    sessionId: "s1",
    policy: FAST,
    settle,
    ...(podReadTimeoutMs === undefined ? {} : { podReadTimeoutMs }),
  });
}

export async function echo(channel: PodChannel, text: string): Promise<string> {
  const out: Buffer[] = [];
  await channel.with(undefined, (c) =>
    channelExec(c, { argv: ["echo", text] }, { onStdout: (chunk) => out.push(chunk) }),
  );
  return Buffer.concat(out).toString();
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Starts a call that runs until its channel ends; resolves once `fake`'s helper got it (not after a
 * fixed sleep, which a loaded host outlasts), with its outcome to come.
 */
export async function sleeping(
  fake: ReturnType<typeof fakeCluster>,
  channel: PodChannel,
  signal?: AbortSignal,
): Promise<{ outcome: Promise<unknown> }> {
  const before = fake.state.execs.length;
  const outcome = channel
    .with(signal, (c) => channelExec(c, { argv: ["sleep", "600"] }, {}))
    .catch((e: Error) => e);
  await expect.poll(() => fake.state.execs.slice(before)).toEqual([["sleep", "600"]]);
  return { outcome };
}
