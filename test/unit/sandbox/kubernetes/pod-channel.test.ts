import { EventEmitter } from "node:events";
import type { Readable, Writable } from "node:stream";
import type { Exec, V1Pod, V1Status } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { channelExec } from "../../../../src/sandbox/channel/protocol/exec.js";
import { encodeFrame, FrameDecoder, FrameType } from "../../../../src/sandbox/channel/protocol/frame.js";
import {
  type ChannelEvent,
  connectHelper,
  EXEC_CHANNEL_VERSION,
  type KubernetesCluster,
  PodChannel,
} from "../../../../src/sandbox/kubernetes/index.js";
import { AbortError } from "../../../../src/util/index.js";

const FAST = { attempts: 3, firstDelayMs: 10, maxDelayMs: 20 };
/** A helper's end settles within 200 ms here (channel-end.ts; 3 s by default). */
const SETTLE = { windowMs: 200, everyMs: 10, reuseMs: 100 };
const RUNNING: V1Pod = {
  status: { phase: "Running", containerStatuses: [{ state: { running: {} } } as never] },
};

/**
 * A cluster whose pods/exec runs an in-memory helper per stream: it answers pings, runs `echo`
 * (stdout + exit 0) and leaves `sleep` running. `pod` is what readNamespacedPod returns (null: 404),
 * after the Pods queued in `nextPods` (one a read); `refuse` makes new exec streams fail.
 */
function fakeCluster(heartbeatMs = 60_000) {
  const sockets: Array<EventEmitter & { close(): void }> = [];
  const statuses: Array<(s: V1Status) => void> = [];
  const state = {
    pod: RUNNING as V1Pod | null,
    nextPods: [] as Array<V1Pod | null>,
    /** GETs of the Pod so far. */
    reads: 0,
    refuse: false,
    events: [] as ChannelEvent[],
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
    readNamespacedPod: async () => {
      state.reads++;
      if (state.hang) return new Promise(() => {});
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
 * The exec of `<sealed helper> --version` before each channel (start-pod.ts): prints the version the
 * backend needs (EXEC_CHANNEL_VERSION), exits 0;
 * with `fails`, the runtime refuses to load it (gVisor's message, no exit code).
 */
function versionProbe(stdout: Writable, onStatus: unknown, fails: boolean) {
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

async function open(fake: ReturnType<typeof fakeCluster>, podReadTimeoutMs?: number) {
  const client = await connectHelper(fake.cluster, "warden-s1");
  return new PodChannel(fake.cluster, "warden-s1", client, {
    sessionId: "s1",
    policy: FAST,
    settle: SETTLE,
    ...(podReadTimeoutMs === undefined ? {} : { podReadTimeoutMs }),
  });
}

async function echo(channel: PodChannel, text: string): Promise<string> {
  const out: Buffer[] = [];
  await channel.with(undefined, (c) =>
    channelExec(c, { argv: ["echo", text] }, { onStdout: (chunk) => out.push(chunk) }),
  );
  return Buffer.concat(out).toString();
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts a call that runs until its channel ends; resolves once it runs, with its outcome to come. */
async function sleeping(channel: PodChannel): Promise<{ outcome: Promise<unknown> }> {
  const outcome = channel
    .with(undefined, (c) => channelExec(c, { argv: ["sleep", "600"] }, {}))
    .catch((e: Error) => e);
  await sleep(10);
  return { outcome };
}

describe("PodChannel: the exec stream ends under a live session", () => {
  it("re-opens the channel in the background; the next call succeeds; one reconnect", async () => {
    const fake = fakeCluster();
    const channel = await open(fake);
    expect(await echo(channel, "before")).toBe("before\n");
    fake.cut();
    expect(await echo(channel, "after")).toBe("after\n");
    expect(channel.reconnects).toBe(1);
    expect(fake.sockets).toHaveLength(2);
    expect(fake.state.events.map((e) => [e.outcome, e.reconnects])).toEqual([
      ["lost", 0],
      ["reopened", 1],
    ]);
    expect(fake.state.events[0]?.reason).toBe(
      "the Pod's exec stream closed without the helper's exit status (WebSocket code 1006: the connection was lost)",
    );
    channel.close();
  });

  it("a call running when the stream ended rejects at once, naming the Pod and what happened", async () => {
    const fake = fakeCluster();
    const channel = await open(fake);
    const running = (await sleeping(channel)).outcome;
    fake.cut();
    const err = (await running) as Error & { code?: string };
    expect(err.code).toBe("SANDBOX_ERROR");
    expect(err.message).toBe(
      "the exec stream to Pod ns/warden-s1 ended while this call ran (the Pod's exec stream closed without the helper's exit status (WebSocket code 1006: the connection was lost)); " +
        "what the call started was stopped, and the channel is re-opened for the next call: retry it.",
    );
    expect(await echo(channel, "next")).toBe("next\n");
    channel.close();
  });

  it("a Pod that is gone fails every later call naming the Pod, without retrying", async () => {
    const fake = fakeCluster();
    const channel = await open(fake);
    fake.state.pod = null;
    fake.cut();
    const message =
      "the sandbox Pod ns/warden-s1 cannot be reached: it no longer exists (its exec channel ended: the Pod's exec stream closed without the helper's exit status (WebSocket code 1006: the connection was lost)); start a new session.";
    await expect(echo(channel, "x")).rejects.toThrow(message);
    await expect(echo(channel, "y")).rejects.toThrow(message);
    expect(fake.sockets).toHaveLength(1);
    expect(fake.state.events.at(-1)).toMatchObject({ outcome: "failed", final: true });
    channel.close();
  });

  it("gives up after the policy's attempts while the API refuses, and the next call tries again", async () => {
    const fake = fakeCluster();
    const channel = await open(fake);
    fake.state.refuse = true;
    fake.cut();
    await expect(echo(channel, "x")).rejects.toThrow(
      /could not be re-opened in 3 attempts \(last: starting the channel in Pod ns\/warden-s1 failed: connect ECONNREFUSED/,
    );
    fake.state.refuse = false;
    expect(await echo(channel, "back")).toBe("back\n");
    expect(channel.reconnects).toBe(1);
    channel.close();
  });

  it("a helper that ended (killed by a newer channel: another controller took over) is not fought over", async () => {
    const fake = fakeCluster();
    const channel = await open(fake);
    const running = (await sleeping(channel)).outcome;
    fake.helperKilled();
    const message =
      "the exec channel to Pod ns/warden-s1 ended (the channel's helper in Pod ns/warden-s1 ended (command terminated with non-zero exit code: 137)) while the Pod still runs: " +
      "a command in the sandbox may have killed the channel's helper (e.g. kill -9 -1), or another warden controller took the Pod over; " +
      "the channel is not re-opened, so two controllers never take a Pod from each other, and the Pod is left running for whoever holds it; " +
      "start a new session, and DELETE this one (deleting it deletes the Pod).";
    expect(await running).toMatchObject({ code: "SANDBOX_NOT_RUNNING", message });
    await expect(echo(channel, "x")).rejects.toMatchObject({ code: "SANDBOX_NOT_RUNNING", message });
    await sleep(50);
    expect(fake.sockets).toHaveLength(1);
    expect(channel.reconnects).toBe(0);
    expect(fake.state.events).toEqual([
      expect.objectContaining({
        outcome: "failed",
        final: true,
        reason:
          "the channel's helper in Pod ns/warden-s1 ended (command terminated with non-zero exit code: 137)",
      }),
    ]);
    channel.close();
  });

  it("a helper that ended in a Pod that is gone: every later call names the Pod, that it is gone and what to do", async () => {
    const fake = fakeCluster();
    const channel = await open(fake);
    fake.state.pod = null;
    fake.helperKilled();
    const message =
      "the sandbox Pod ns/warden-s1 is gone: the API answers 404 (it no longer exists), as a GET of it said after its exec channel ended " +
      "(the channel's helper in Pod ns/warden-s1 ended (command terminated with non-zero exit code: 137)); what ran in it and its files are lost; " +
      "start a new session, and DELETE this one.";
    for (const text of ["x", "y"])
      await expect(echo(channel, text)).rejects.toMatchObject({ code: "SANDBOX_NOT_RUNNING", message });
    expect(fake.sockets).toHaveLength(1);
    expect(fake.state.events).toEqual([
      expect.objectContaining({ outcome: "failed", final: true, error: message }),
    ]);
    channel.close();
  });

  it("a helper that ended as its container ended (kill -TERM 1): the Pod is read again until its status says so, and every call names that", async () => {
    const fake = fakeCluster();
    const channel = await open(fake);
    const running = (await sleeping(channel)).outcome;
    const terminated = { reason: "Completed", exitCode: 0, message: "X" };
    const containerEnded: V1Pod = {
      status: { phase: "Running", containerStatuses: [{ state: { terminated } } as never] },
    };
    const succeeded: V1Pod = {
      status: { phase: "Succeeded", containerStatuses: [{ state: { terminated } } as never] },
    };
    // The kubelet reports the container's end a moment after the helper's stream ended, the phase later.
    fake.state.nextPods = [RUNNING, RUNNING, containerEnded, containerEnded];
    fake.state.pod = succeeded;
    const readsBefore = fake.state.reads;
    fake.helperKilled();
    const message =
      "the sandbox Pod ns/warden-s1 has ended: its phase is Succeeded, its container terminated (reason Completed, exit code 0), as a GET of it said after its exec channel ended " +
      "(the channel's helper in Pod ns/warden-s1 ended (command terminated with non-zero exit code: 137)); " +
      "a container ends when its PID 1 (warden-helper --init) exits (a command in the sandbox can make it: e.g. kill -TERM 1) or is killed (e.g. out of memory); " +
      "this session is over, what ran in it and its files are lost; start a new session, and DELETE this one.";
    expect(await running).toMatchObject({ code: "SANDBOX_NOT_RUNNING", message });
    for (const text of ["x", "y"])
      await expect(echo(channel, text)).rejects.toMatchObject({ code: "SANDBOX_NOT_RUNNING", message });
    // Five reads up to Succeeded, final: later calls reuse the verdict.
    expect(fake.state.reads - readsBefore).toBe(5);
    expect(fake.sockets).toHaveLength(1);
    expect(fake.state.events).toEqual([
      expect.objectContaining({ outcome: "failed", final: true, error: message }),
    ]);
    channel.close();
  });

  it("a Pod still running when the window is over is said to run, and read again by each later call until it ended", async () => {
    const fake = fakeCluster();
    const channel = await open(fake);
    const readsBefore = fake.state.reads;
    const started = Date.now();
    fake.helperKilled();
    await expect(echo(channel, "x")).rejects.toMatchObject({
      message: expect.stringContaining(") while the Pod still runs: "),
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(SETTLE.windowMs - 20);
    const reads = fake.state.reads - readsBefore;
    expect(reads).toBeGreaterThan(2);
    expect(reads).toBeLessThanOrEqual(SETTLE.windowMs / SETTLE.everyMs + 1);
    await expect(echo(channel, "y")).rejects.toMatchObject({
      message: expect.stringContaining(") while the Pod still runs: "),
    });
    expect(fake.state.reads - readsBefore).toBe(reads); // within reuseMs of the verdict: no GET
    await sleep(SETTLE.reuseMs);
    await expect(echo(channel, "y")).rejects.toMatchObject({
      message: expect.stringContaining(") while the Pod still runs: "),
    });
    expect(fake.state.reads - readsBefore).toBe(reads + 1); // past the window: one GET a call
    fake.state.pod = {
      status: {
        phase: "Failed",
        containerStatuses: [{ state: { terminated: { reason: "OOMKilled", exitCode: 137 } } } as never],
      },
    };
    await sleep(SETTLE.reuseMs);
    await expect(echo(channel, "z")).rejects.toMatchObject({
      message: expect.stringMatching(
        /^the sandbox Pod ns\/warden-s1 has ended: its phase is Failed, its container terminated \(reason OOMKilled, exit code 137\), as a GET/,
      ),
    });
    expect(fake.sockets).toHaveLength(1);
    channel.close();
  });

  it("a call cut by the helper's end rejects AbortError as soon as its signal fires, not after the Pod's re-reads", async () => {
    const fake = fakeCluster(); // the Pod keeps reading as running: re-read for the whole window
    const channel = await open(fake);
    const abort = new AbortController();
    const outcome = channel
      .with(abort.signal, (c) => channelExec(c, { argv: ["sleep", "600"] }, {}))
      .catch((e: Error) => e);
    await sleep(10);
    fake.helperKilled();
    await sleep(20);
    const aborted = Date.now();
    abort.abort();
    const err = await outcome;
    expect(Date.now() - aborted).toBeLessThan(SETTLE.windowMs / 2);
    expect(err).toBeInstanceOf(AbortError);
    channel.close();
  });

  it("a GET of the Pod that never answers is given up after podReadTimeoutMs, naming it: no call waits forever", async () => {
    const fake = fakeCluster();
    const channel = await open(fake, 50);
    fake.state.hang = true;
    fake.helperKilled();
    await expect(echo(channel, "x")).rejects.toMatchObject({
      message: expect.stringContaining(
        "and is not re-opened; reading the Pod failed (the API server did not answer within 50 ms); start a new session",
      ),
    });
    channel.close();
  });

  it("a close by the session is no loss: no re-open, calls reject SANDBOX_NOT_RUNNING", async () => {
    const fake = fakeCluster();
    const channel = await open(fake);
    channel.close();
    await sleep(20);
    await expect(echo(channel, "x")).rejects.toMatchObject({ code: "SANDBOX_NOT_RUNNING" });
    expect(fake.sockets).toHaveLength(1);
    expect(fake.state.events).toEqual([]);
  });

  it("pings a quiet channel every heartbeatMs; a stream whose pings go unanswered is replaced", async () => {
    const fake = fakeCluster(30);
    const channel = await open(fake);
    const handshake = fake.state.pings[0] ?? 0;
    await sleep(200);
    expect((fake.state.pings[0] ?? 0) - handshake).toBeGreaterThanOrEqual(3);
    expect(channel.reconnects).toBe(0);
    fake.state.mute = true; // the first stream's helper stops answering (a half-open connection)
    for (let i = 0; i < 50 && channel.reconnects === 0; i++) await sleep(10);
    expect(channel.reconnects).toBe(1);
    expect(fake.state.events[0]).toMatchObject({
      outcome: "lost",
      reason:
        "heartbeat: the helper did not answer a heartbeat ping within 30 ms and sent nothing else meanwhile",
    });
    expect(await echo(channel, "on")).toBe("on\n");
    channel.close();
  });
});

describe("connectHelper: the channel's helper binary", () => {
  it("runs the execute-only copy when its --version answers", async () => {
    const fake = fakeCluster();
    const lines: string[] = [];
    const client = await connectHelper(fake.cluster, "warden-s1", { log: (l) => lines.push(l) });
    client.close();
    expect(fake.state.commands).toEqual([
      ["/usr/local/libexec/warden/warden-helper", "--version"],
      ["/usr/local/libexec/warden/warden-helper", "--channel"],
    ]);
    expect(lines).toEqual([]);
  });

  it("decides once per Pod: a re-open neither probes again nor falls back when the sandbox would make the probe fail", async () => {
    const fake = fakeCluster();
    (await connectHelper(fake.cluster, "warden-s1")).close();
    fake.state.sealedFails = true; // say, the sandbox used up its pids while the probe would run
    (await connectHelper(fake.cluster, "warden-s1")).close();
    expect(fake.state.commands).toEqual([
      ["/usr/local/libexec/warden/warden-helper", "--version"],
      ["/usr/local/libexec/warden/warden-helper", "--channel"],
      ["/usr/local/libexec/warden/warden-helper", "--channel"],
    ]);
    expect(fake.state.patches).toEqual([{ metadata: { annotations: { "io.warden.helper": "sealed" } } }]);
  });

  it("chooses nothing when the probe gets no exit status (an API hiccup): the channel is not started", async () => {
    const fake = fakeCluster();
    fake.state.probeBreaks = true;
    await expect(connectHelper(fake.cluster, "warden-s1")).rejects.toThrow(
      "starting the channel in Pod ns/warden-s1 failed: exec in Pod ns/warden-s1 failed: websocket: bad handshake; check that the Pod runs and that the kubeconfig's user may create pods/exec.",
    );
    expect({ commands: fake.state.commands, patches: fake.state.patches }).toEqual({
      commands: [["/usr/local/libexec/warden/warden-helper", "--version"]],
      patches: [],
    });
  });

  it("takes the choice from the Pod's annotation (another replica's, before a restart) without a probe", async () => {
    const fake = fakeCluster();
    fake.state.pod = { ...RUNNING, metadata: { annotations: { "io.warden.helper": "sealed" } } };
    fake.state.sealedFails = true;
    (await connectHelper(fake.cluster, "warden-s1")).close();
    expect(fake.state.commands).toEqual([["/usr/local/libexec/warden/warden-helper", "--channel"]]);
    expect(fake.state.patches).toEqual([]);
  });

  it("runs the readable copy when the runtime refuses the execute-only one, and logs why", async () => {
    const fake = fakeCluster();
    fake.state.sealedFails = true;
    const lines: string[] = [];
    const client = await connectHelper(fake.cluster, "warden-s1", { log: (l) => lines.push(l) });
    client.close();
    expect(fake.state.commands.at(-1)).toEqual(["/usr/local/bin/warden-helper", "--channel"]);
    expect(lines).toEqual([
      "the execute-only helper /usr/local/libexec/warden/warden-helper does not run in Pod ns/warden-s1 (exit -1); the channel runs /usr/local/bin/warden-helper, dumpable until its first prctl (rebuild the image with warden images build; under gVisor this is expected)",
    ]);
  });
});
