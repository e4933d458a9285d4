/**
 * connectChannel's `retryPingMs` (re-attaching to a running helper after a controller restart):
 * the engine may subscribe a new attach to the container's output only after the helper answered
 * the first ping, so that reply is lost; the ping is sent again and the channel comes up.
 */
import { Duplex } from "node:stream";
import type Docker from "dockerode";
import { describe, expect, it } from "vitest";
import {
  encodeFrame,
  type Frame,
  FrameDecoder,
  FrameType,
} from "../../../../../src/sandbox/channel/protocol/frame.js";
import { connectChannel, HelperUnavailableError } from "../../../../../src/sandbox/docker/channel/connect.js";

/** A fake attached container whose helper answers pings, dropping the first `lost` replies. */
function fakeContainer(lost: number): { container: Docker.Container; pings: () => number } {
  let pings = 0;
  const socket = new Duplex({
    read() {},
    write(chunk: Buffer, _enc, cb) {
      decoder.push(chunk);
      cb();
    },
  });
  const decoder = new FrameDecoder((f: Frame) => {
    if (f.type !== FrameType.ping) return;
    pings++;
    if (pings <= lost) return;
    const frame = encodeFrame(FrameType.pong, f.id, Buffer.from('{"version":"2","pid":7}'));
    const header = Buffer.alloc(8);
    header[0] = 1; // stdout, in the engine's multiplexed stream format
    header.writeUInt32BE(frame.length, 4);
    socket.push(Buffer.concat([header, frame]));
  });
  const container = {
    id: "fake-container",
    attach: async () => socket,
    start: async () => undefined,
    inspect: async () => ({ State: { Running: true } }),
  } as unknown as Docker.Container;
  return { container, pings: () => pings };
}

describe("connectChannel retryPingMs", () => {
  it("pings again when the first reply is lost, and connects", async () => {
    const { container, pings } = fakeContainer(1);
    const client = await connectChannel(container, { retryPingMs: 50, timeoutMs: 5000 });
    expect(pings()).toBe(2);
    expect(await client.ping()).toEqual({ version: "2", pid: 7 });
    client.close();
  });

  it("without it one lost reply is a HelperUnavailableError naming the missing reply", async () => {
    const { container, pings } = fakeContainer(1);
    const err = await connectChannel(container, { timeoutMs: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HelperUnavailableError);
    expect((err as HelperUnavailableError).reason).toBe("no reply to ping in time");
    expect(pings()).toBe(1);
  });
});
