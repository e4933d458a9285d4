/**
 * ChannelClient deadlines and corruption handling (red-team finding: a stolen request made the
 * next file operation hang forever). A request without a reply rejects after its deadline; a
 * frame that cannot be parsed, or one for a request id never sent, closes the channel so every
 * pending and later request fails fast.
 */
import { describe, expect, it, vi } from "vitest";
import { SandboxError, SandboxNotRunningError } from "../../../../../src/errors.js";
import {
  ChannelClient,
  type ChannelTransport,
  DEFAULT_REQUEST_TIMEOUT_MS,
} from "../../../../../src/sandbox/channel/protocol/client.js";
import { channelStat } from "../../../../../src/sandbox/channel/protocol/files.js";
import {
  encodeFrame,
  type Frame,
  FrameDecoder,
  FrameType,
} from "../../../../../src/sandbox/channel/protocol/frame.js";
import { AbortError } from "../../../../../src/util/abort.js";

/** A transport whose helper never answers; `inject` delivers raw bytes as if from the helper. */
function silentHelper(requestTimeoutMs?: number) {
  let sinks: { onData(c: Buffer): void; onClose(r: string): void } | undefined;
  const sent: Frame[] = [];
  const decoder = new FrameDecoder((f) => sent.push(f));
  let closes = 0;
  const transport: ChannelTransport = {
    write: (chunk) => decoder.push(chunk),
    start: (s) => {
      sinks = s;
    },
    close: () => {
      closes++;
      sinks?.onClose("closed");
    },
  };
  const logs: string[] = [];
  const client = new ChannelClient(transport, {
    containerId: "c0ffee0000000000",
    log: (m) => logs.push(m),
    ...(requestTimeoutMs !== undefined ? { requestTimeoutMs } : {}),
  });
  return { client, sent, logs, inject: (b: Buffer) => sinks?.onData(b), closes: () => closes };
}

describe("ChannelClient deadlines", () => {
  it("defaults to a 30 s deadline per request: pending at 29.999 s, rejected at 30 s", async () => {
    vi.useFakeTimers();
    try {
      const h = silentHelper();
      let settled: unknown;
      channelStat(h.client, "/workspace/a.txt").then(
        () => (settled = "resolved"),
        (e: unknown) => (settled = e),
      );
      await vi.advanceTimersByTimeAsync(DEFAULT_REQUEST_TIMEOUT_MS - 1);
      expect(settled).toBeUndefined();
      await vi.advanceTimersByTimeAsync(1);
      expect(settled).toBeInstanceOf(SandboxError);
      expect((settled as SandboxError).message).toContain(
        "did not answer stat of /workspace/a.txt within 30000 ms",
      );
    } finally {
      vi.useRealTimers();
    }
  });

  it("rejects a file operation that gets no reply with a SandboxError naming it, and keeps the channel", async () => {
    const h = silentHelper(50);
    const started = Date.now();
    const err = await channelStat(h.client, "/workspace/a.txt").catch((e: unknown) => e);
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    expect(err).toBeInstanceOf(SandboxError);
    expect((err as SandboxError).message).toBe(
      "warden-helper did not answer stat of /workspace/a.txt within 50 ms; the operation was abandoned (retry it, or recreate the sandbox if this repeats).",
    );
    expect(h.client.closed).toBe(false);
    expect(h.client.inFlight).toBe(0);
    // The late reply of the abandoned request is dropped without closing the channel.
    h.inject(encodeFrame(FrameType.result, 1, Buffer.from("null")));
    expect(h.client.closed).toBe(false);
  });

  it("a per-call deadline overrides the client's, and the signal still aborts", async () => {
    const h = silentHelper(60_000);
    await expect(
      h.client.call(FrameType.stat, Buffer.from("{}"), "stat of", "x", undefined, 20),
    ).rejects.toThrow("warden-helper did not answer stat of x within 20 ms;");
    const ac = new AbortController();
    const p = h.client.call(FrameType.stat, Buffer.from("{}"), "stat of", "y", ac.signal);
    ac.abort();
    await expect(p).rejects.toBeInstanceOf(AbortError);
    expect(h.client.inFlight).toBe(0);
  });
});

describe("ChannelClient on a corrupted stream", () => {
  it("closes on a frame for a request id never sent; pending and later calls fail fast", async () => {
    const h = silentHelper();
    const pending = channelStat(h.client, "a.txt").catch((e: unknown) => e);
    h.inject(encodeFrame(FrameType.exit, 77, Buffer.from('{"code":0}')));
    const err = (await pending) as SandboxError;
    const msg =
      "The warden-helper channel of sandbox container c0ffee000000 was closed: corrupted stream (a frame for request id 77, which was never sent); destroy this sandbox and create a new one.";
    expect(err).toBeInstanceOf(SandboxError);
    expect(err).not.toBeInstanceOf(SandboxNotRunningError);
    expect(err.message).toBe(msg);
    expect(h.client.closed).toBe(true);
    expect(h.closes()).toBe(1);
    expect(h.logs).toEqual(["channel: corrupted stream: a frame for request id 77, which was never sent"]);
    await expect(channelStat(h.client, "b.txt")).rejects.toThrow(msg);
  });

  it("closes on an unparseable frame (payload length over the limit)", async () => {
    const h = silentHelper();
    const pending = channelStat(h.client, "a.txt").catch((e: unknown) => e);
    const bad = Buffer.alloc(9);
    bad.writeUInt32BE(0xffff_ffff, 0);
    bad.writeUInt8(FrameType.stdout, 4);
    bad.writeUInt32BE(1, 5);
    h.inject(bad);
    const err = (await pending) as SandboxError;
    expect(err).toBeInstanceOf(SandboxError);
    expect(err.message).toMatch(
      /^The warden-helper channel of sandbox container c0ffee000000 was closed: corrupted stream \(.+\); destroy this sandbox and create a new one\.$/,
    );
    expect(h.client.closed).toBe(true);
  });

  it("a dropped transport still rejects SandboxNotRunningError", async () => {
    const h = silentHelper();
    const pending = channelStat(h.client, "a.txt").catch((e: unknown) => e);
    h.client.close();
    expect(await pending).toBeInstanceOf(SandboxNotRunningError);
  });
});
