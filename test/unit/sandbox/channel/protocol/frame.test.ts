import { describe, expect, it } from "vitest";
import { SandboxError } from "../../../../../src/errors.js";
import {
  decodeJsonData,
  encodeFrame,
  encodeJsonData,
  type Frame,
  FrameDecoder,
  FrameType,
  HEADER_BYTES,
  MAX_PAYLOAD_BYTES,
} from "../../../../../src/sandbox/channel/protocol/frame.js";

function decodeAll(chunks: Buffer[]): Frame[] {
  const frames: Frame[] = [];
  const d = new FrameDecoder((f) => frames.push({ ...f, payload: Buffer.from(f.payload) }));
  for (const c of chunks) d.push(c);
  expect(d.pendingBytes).toBe(0);
  return frames;
}

describe("channel frame codec", () => {
  it("encodes the 9-byte header: u32 BE length, type, u32 BE id", () => {
    const f = encodeFrame(FrameType.stdout, 0x01020304, Buffer.from("hi"));
    expect([...f]).toEqual([0, 0, 0, 2, 0x42, 1, 2, 3, 4, 0x68, 0x69]);
    expect(HEADER_BYTES).toBe(9);
  });

  it("decodes frames split at every byte boundary", () => {
    const stream = Buffer.concat([
      encodeFrame(FrameType.stdout, 7, Buffer.from("hello")),
      encodeFrame(FrameType.exit, 7, Buffer.from('{"code":3}')),
      encodeFrame(FrameType.pong, 1),
    ]);
    for (let cut = 1; cut < stream.length; cut++) {
      const frames = decodeAll([stream.subarray(0, cut), stream.subarray(cut)]);
      expect(frames.map((f) => [f.type, f.id, f.payload.toString()])).toEqual([
        [0x42, 7, "hello"],
        [0x44, 7, '{"code":3}'],
        [0x41, 1, ""],
      ]);
    }
    const oneByOne = decodeAll([...stream].map((b) => Buffer.from([b])));
    expect(oneByOne).toHaveLength(3);
  });

  it("output that looks like a frame stays payload: a command cannot forge an exit", () => {
    const forged = encodeFrame(FrameType.exit, 7, Buffer.from('{"code":0}'));
    const real = encodeFrame(FrameType.stdout, 7, Buffer.concat([forged, forged]));
    const frames = decodeAll([real]);
    expect(frames).toHaveLength(1);
    expect(frames[0]!.type).toBe(FrameType.stdout);
    expect(frames[0]!.payload.equals(Buffer.concat([forged, forged]))).toBe(true);
  });

  it("rejects a length over 64 MiB instead of allocating it", () => {
    const head = Buffer.alloc(HEADER_BYTES);
    head.writeUInt32BE(MAX_PAYLOAD_BYTES + 1, 0);
    const d = new FrameDecoder(() => {});
    expect(() => d.push(head)).toThrow(SandboxError);
    expect(() => encodeFrame(FrameType.write, 1, Buffer.alloc(MAX_PAYLOAD_BYTES + 1))).toThrow(/exceeds/);
  });

  it("round-trips JSON + data payloads", () => {
    const p = encodeJsonData({ path: "/workspace/a", mode: 0o600 }, Buffer.from([0, 255, 10]));
    const { json, data } = decodeJsonData(p);
    expect(json).toEqual({ path: "/workspace/a", mode: 384 });
    expect([...data]).toEqual([0, 255, 10]);
    expect(() => decodeJsonData(Buffer.from([0, 0, 0, 9, 1]))).toThrow(/exceeds the frame/);
  });
});
