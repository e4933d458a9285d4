import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ChannelClient, type ChannelTransport } from "../../../../../src/sandbox/channel/protocol/client.js";
import { encodeFrame, FrameDecoder, FrameType } from "../../../../../src/sandbox/channel/protocol/frame.js";
import { heartbeatDelayMs, startHeartbeat } from "../../../../../src/sandbox/channel/protocol/heartbeat.js";

/** A client over an in-memory helper that answers pings while `answering`; counts the pings. */
function pingedClient() {
  const state = { pings: 0, answering: true };
  let sinks: { onData(c: Buffer): void; onClose(r: string): void } | undefined;
  const decoder = new FrameDecoder((frame) => {
    if (frame.type !== FrameType.ping) return;
    state.pings++;
    if (!state.answering) return;
    const pong = encodeFrame(FrameType.pong, frame.id, Buffer.from('{"version":"3","pid":1}'));
    setImmediate(() => sinks?.onData(pong));
  });
  const transport: ChannelTransport = {
    write: (chunk) => decoder.push(chunk),
    start: (s) => {
      sinks = s;
    },
    close: () => setImmediate(() => sinks?.onClose("closed")),
  };
  return { client: new ChannelClient(transport, { containerId: "pod-1" }), state };
}

/**
 * Lets `ms` of the heartbeat's clock pass. The heartbeat's timers, its clock (performance.now()) and
 * the fake helper's setImmediate are vitest's fake timers: each test's counts are exact however busy
 * the machine is (a real 200 ms window held 3 pings or fewer on a loaded host).
 */
const sleep = (ms: number) => vi.advanceTimersByTimeAsync(ms);

describe("heartbeatDelayMs", () => {
  it("is everyMs after the last traffic, 0 once that has passed", () => {
    expect(heartbeatDelayMs(1000, 1000, 60_000)).toBe(60_000);
    expect(heartbeatDelayMs(31_000, 1000, 60_000)).toBe(30_000);
    expect(heartbeatDelayMs(61_000, 1000, 60_000)).toBe(0);
    expect(heartbeatDelayMs(90_000, 1000, 60_000)).toBe(0);
  });
});

describe("startHeartbeat", () => {
  beforeEach(() => {
    vi.useFakeTimers({
      toFake: ["setTimeout", "clearTimeout", "setImmediate", "clearImmediate", "performance"],
    });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("pings a quiet channel every everyMs, quietly (not busy for the output share), until stopped", async () => {
    const { client, state } = pingedClient();
    const beat = startHeartbeat(client, { everyMs: 40, onUnanswered: () => expect.unreachable() });
    await sleep(30);
    expect(state.pings).toBe(0);
    await sleep(200);
    expect(state.pings).toBe(5); // at 40, 80, 120, 160 and 200 ms: each pong is traffic, the next is due 40 ms later
    expect(client.lastBusyAt).toBeUndefined();
    expect(client.inFlight).toBe(0);
    beat.stop();
    const stoppedAt = state.pings;
    await sleep(120);
    expect(state.pings).toBe(stoppedAt);
    client.close();
  });

  it("does not ping while other traffic keeps the channel busy", async () => {
    const { client, state } = pingedClient();
    const beat = startHeartbeat(client, { everyMs: 60, onUnanswered: () => expect.unreachable() });
    for (let i = 0; i < 8; i++) {
      await sleep(25);
      const pong = client.ping(); // traffic of its own: the heartbeat has nothing to add
      await sleep(0); // the fake helper's pong
      await pong;
    }
    expect(state.pings).toBe(8);
    beat.stop();
    client.close();
  });

  it("stops by itself when the channel closes", async () => {
    const { client, state } = pingedClient();
    startHeartbeat(client, { everyMs: 30, onUnanswered: () => expect.unreachable() });
    client.close();
    await sleep(120);
    expect(state.pings).toBe(0);
  });

  it("reports a ping left unanswered with nothing else arriving, once, and stops", async () => {
    const { client, state } = pingedClient();
    state.answering = false;
    const reasons: string[] = [];
    startHeartbeat(client, { everyMs: 30, timeoutMs: 50, onUnanswered: (r) => reasons.push(r) });
    await sleep(250);
    expect(reasons).toEqual([
      "the helper did not answer a heartbeat ping within 50 ms and sent nothing else meanwhile",
    ]);
    expect(state.pings).toBe(1);
    expect(client.closed).toBe(false); // the owner decides
    client.close();
  });
});
