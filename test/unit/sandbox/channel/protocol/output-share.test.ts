/**
 * The output share (issue 11, noisy neighbour): while another channel has a request in flight, a
 * channel's incoming bytes are paced to the share's rate by pausing its transport; alone, never.
 */
import { describe, expect, it, vi } from "vitest";
import { ChannelClient, type ChannelTransport } from "../../../../../src/sandbox/channel/protocol/client.js";
import { encodeFrame, FrameType } from "../../../../../src/sandbox/channel/protocol/frame.js";
import {
  CONTENDED_BURST_MS,
  CONTENDED_LINGER_MS,
  DEFAULT_CONTENDED_OUTPUT_BYTES_PER_SECOND,
  OutputShare,
} from "../../../../../src/sandbox/channel/protocol/output-share.js";

const MiB = 1024 * 1024;

/** A transport recording pause/resume; `inject` delivers bytes as if from the helper. */
function pausableTransport() {
  let sinks: { onData(c: Buffer): void; onClose(r: string): void } | undefined;
  const events: string[] = [];
  const transport: ChannelTransport = {
    write: () => {},
    start: (s) => {
      sinks = s;
    },
    close: () => sinks?.onClose("closed"),
    pause: () => events.push("pause"),
    resume: () => events.push("resume"),
  };
  return { transport, events, inject: (b: Buffer) => sinks?.onData(b) };
}

describe("OutputShare", () => {
  it("defaults to 16 MiB/s with a 100 ms burst", () => {
    expect(DEFAULT_CONTENDED_OUTPUT_BYTES_PER_SECOND).toBe(16 * MiB);
    expect(CONTENDED_BURST_MS).toBe(100);
    expect(new OutputShare().bytesPerSecond).toBe(16 * MiB);
  });

  it("paces a channel only while another one has a request in flight", () => {
    let t = 0;
    const share = new OutputShare(10 * MiB); // burst: 1 MiB
    const other = { inFlight: 0 };
    share.join(other);
    const meter = share.join({ inFlight: 1 }, () => t);
    // Alone: any amount, no wait.
    expect(meter.take(64 * MiB)).toBe(0);
    other.inFlight = 1;
    // Contended: the 1 MiB burst passes, the next 1 MiB waits 100 ms at 10 MiB/s.
    expect(meter.take(MiB)).toBe(0);
    expect(meter.take(MiB)).toBe(100);
    t += 100; // paid back
    expect(meter.take(MiB / 2)).toBe(50);
    share.leave(other);
    expect(meter.take(64 * MiB)).toBe(0);
  });

  it("counts a channel busy for 1 s after its last request ended (a session's calls have short gaps)", () => {
    expect(CONTENDED_LINGER_MS).toBe(1000);
    let t = 5000;
    const share = new OutputShare(10 * MiB);
    share.join({ inFlight: 0, lastBusyAt: 4001 });
    const meter = share.join({ inFlight: 1 }, () => t);
    expect(meter.take(2 * MiB)).toBe(100); // 999 ms after: contended
    t = 5001;
    expect(meter.take(2 * MiB)).toBe(0); // 1000 ms after: alone
  });

  it("ChannelClient records when its last request ended", async () => {
    const t = pausableTransport();
    const client = new ChannelClient(t.transport, {
      containerId: "c0ffee0000000000",
      share: new OutputShare(),
    });
    expect(client.lastBusyAt).toBeUndefined();
    const req = client.open(FrameType.exec, Buffer.alloc(0), { onFrame: () => true, onClose: () => {} });
    const opened = client.lastBusyAt as number;
    expect(opened).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 5));
    t.inject(encodeFrame(FrameType.exit, req.id, Buffer.from('{"code":0}')));
    expect(client.inFlight).toBe(0);
    expect(client.lastBusyAt as number).toBeGreaterThan(opened);
    client.close();
  });

  it("a rate of 0 turns the limit off", () => {
    const share = new OutputShare(0);
    share.join({ inFlight: 1 });
    expect(share.join({ inFlight: 1 }).take(1024 * MiB)).toBe(0);
  });

  it("ChannelClient pauses its transport for the rate's wait and resumes it, delivering every byte", async () => {
    vi.useFakeTimers();
    try {
      const share = new OutputShare(MiB); // burst: 104857.6 bytes
      const busy = { inFlight: 1 };
      share.join(busy);
      const t = pausableTransport();
      const client = new ChannelClient(t.transport, { containerId: "c0ffee0000000000", share });
      const got: number[] = [];
      const req = client.open(FrameType.exec, Buffer.alloc(0), {
        onFrame: (f) => {
          got.push(f.payload.length);
          return false;
        },
        onClose: () => {},
      });
      const payload = Buffer.alloc(200_000);
      t.inject(encodeFrame(FrameType.stdout, req.id, payload));
      expect(got).toEqual([200_000]);
      // 200,009 bytes (header included) less the 104,857.6-byte burst: 95,151.4 bytes at 1 MiB/s = 90.74 ms.
      expect(t.events).toEqual(["pause"]);
      await vi.advanceTimersByTimeAsync(90);
      expect(t.events).toEqual(["pause"]);
      await vi.advanceTimersByTimeAsync(1);
      expect(t.events).toEqual(["pause", "resume"]);
      // Once the other channel is idle, nothing is paced.
      busy.inFlight = 0;
      t.inject(encodeFrame(FrameType.stdout, req.id, payload));
      expect(t.events).toEqual(["pause", "resume"]);
      client.close();
      expect(share.contended(busy)).toBe(false);
    } finally {
      vi.useRealTimers();
    }
  });
});
