/**
 * A request's output callback that returns a promise (a full spill queue) holds the channel's
 * reading: the transport pauses until the promise settles, and resumes when the request ends
 * (exit, release) however the promise fares; the heartbeat does not count a pong that waits
 * behind such a pause as unanswered.
 */
import { describe, expect, it } from "vitest";
import { ChannelClient, type ChannelTransport } from "../../../../../src/sandbox/channel/protocol/client.js";
import { channelExec } from "../../../../../src/sandbox/channel/protocol/exec.js";
import { encodeFrame, FrameDecoder, FrameType } from "../../../../../src/sandbox/channel/protocol/frame.js";
import { startHeartbeat } from "../../../../../src/sandbox/channel/protocol/heartbeat.js";
import { OutputShare } from "../../../../../src/sandbox/channel/protocol/output-share.js";

/** A transport recording pause/resume and the controller's frames; `inject` delivers helper bytes. */
function recordingTransport() {
  let sinks: { onData(c: Buffer): void; onClose(r: string): void } | undefined;
  const events: string[] = [];
  const sent: { type: number; id: number }[] = [];
  const decoder = new FrameDecoder((f) => sent.push({ type: f.type, id: f.id }));
  const transport: ChannelTransport = {
    write: (chunk) => decoder.push(chunk),
    start: (s) => {
      sinks = s;
    },
    close: () => sinks?.onClose("closed"),
    pause: () => events.push("pause"),
    resume: () => events.push("resume"),
  };
  const client = new ChannelClient(transport, { containerId: "c1", share: new OutputShare() });
  return { client, events, sent, inject: (b: Buffer) => sinks?.onData(b) };
}

const out = (id: number, text: string) => encodeFrame(FrameType.stdout, id, Buffer.from(text));
const exit = (id: number) => encodeFrame(FrameType.exit, id, Buffer.from('{"code":0}'));
const tick = () => new Promise((r) => setImmediate(r));

function deferred() {
  let resolve = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe("ChannelClient read hold", () => {
  it("pauses while an output callback's promise is pending, delivers the rest of the read, resumes after", async () => {
    const t = recordingTransport();
    const full = deferred();
    const got: string[] = [];
    const run = channelExec(
      t.client,
      { argv: ["x"] },
      {
        onStdout: (c) => {
          got.push(c.toString());
          return got.length === 1 ? full.promise : undefined;
        },
      },
    );
    const id = t.sent[0]?.id as number;
    t.inject(Buffer.concat([out(id, "a"), out(id, "b")]));
    expect(t.events).toEqual(["pause"]);
    expect(got).toEqual(["a", "b"]); // already read: delivered, in order
    full.resolve();
    await tick();
    expect(t.events).toEqual(["pause", "resume"]);
    t.inject(exit(id));
    expect((await run).exitCode).toBe(0);
    expect(t.events).toEqual(["pause", "resume"]);
    t.client.close();
  });

  it("the call's end resumes reading even if the promise never settles", async () => {
    const t = recordingTransport();
    const run = channelExec(t.client, { argv: ["x"] }, { onStdout: () => new Promise(() => {}) });
    const id = t.sent[0]?.id as number;
    t.inject(Buffer.concat([out(id, "a"), exit(id)]));
    expect((await run).exitCode).toBe(0);
    expect(t.events).toEqual(["pause", "resume"]);
    t.client.close();
  });

  it("holds of two calls: reading resumes only when neither holds", async () => {
    const t = recordingTransport();
    const a = deferred();
    const b = deferred();
    const runA = channelExec(t.client, { argv: ["a"] }, { onStdout: () => a.promise });
    const runB = channelExec(t.client, { argv: ["b"] }, { onStdout: () => b.promise });
    const [idA, idB] = t.sent.map((s) => s.id) as [number, number];
    t.inject(Buffer.concat([out(idA, "1"), out(idB, "2")]));
    expect(t.events).toEqual(["pause"]);
    a.resolve();
    await tick();
    expect(t.events).toEqual(["pause"]);
    b.resolve();
    await tick();
    expect(t.events).toEqual(["pause", "resume"]);
    t.inject(Buffer.concat([exit(idA), exit(idB)]));
    await Promise.all([runA, runB]);
    t.client.close();
  });

  it("a close while held rejects the call and never resumes the closed transport", async () => {
    const t = recordingTransport();
    const run = channelExec(t.client, { argv: ["x"] }, { onStdout: () => new Promise(() => {}) });
    const id = t.sent[0]?.id as number;
    t.inject(out(id, "a"));
    t.client.close();
    await expect(run).rejects.toThrow();
    expect(t.events).toEqual(["pause"]);
  });

  it("a heartbeat ping left unanswered while reading is held is not a dead stream", async () => {
    const t = recordingTransport();
    const full = deferred();
    const run = channelExec(t.client, { argv: ["x"] }, { onStdout: () => full.promise });
    const id = t.sent[0]?.id as number;
    t.inject(out(id, "a"));
    const reasons: string[] = [];
    const beat = startHeartbeat(t.client, {
      everyMs: 20,
      timeoutMs: 30,
      onUnanswered: (r) => reasons.push(r),
    });
    // A second ping is sent only once the first one's 30 ms went by unanswered and was judged.
    await expect.poll(() => t.sent.filter((s) => s.type === FrameType.ping).length).toBeGreaterThanOrEqual(2);
    expect(reasons).toEqual([]);
    expect(t.client.closed).toBe(false);
    full.resolve();
    t.inject(exit(id));
    await run;
    beat.stop();
    t.client.close();
  });
});
