import { describe, expect, it } from "vitest";
import { StreamDemuxer } from "../../../../src/sandbox/docker/demux.js";

function frame(type: number, body: string): Buffer {
  const payload = Buffer.from(body);
  const header = Buffer.alloc(8);
  header[0] = type;
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
}

function demux(chunks: Buffer[]): { out: string; err: string; pieces: number } {
  let out = "";
  let err = "";
  let pieces = 0;
  const d = new StreamDemuxer({
    onStdout: (c) => {
      out += c.toString();
      pieces++;
    },
    onStderr: (c) => {
      err += c.toString();
      pieces++;
    },
  });
  for (const c of chunks) d.push(c);
  return { out, err, pieces };
}

describe("StreamDemuxer", () => {
  const stream = Buffer.concat([frame(1, "out1\n"), frame(2, "err1\n"), frame(1, "out2\n"), frame(1, "")]);

  it("splits stdout and stderr with no header bytes", () => {
    expect(demux([stream])).toEqual({ out: "out1\nout2\n", err: "err1\n", pieces: 3 });
  });

  it("handles headers and bodies split at every possible byte", () => {
    for (let cut = 1; cut < stream.length; cut++) {
      const r = demux([stream.subarray(0, cut), stream.subarray(cut)]);
      expect({ out: r.out, err: r.err }).toEqual({ out: "out1\nout2\n", err: "err1\n" });
    }
    const bytes = [...stream].map((b) => Buffer.from([b]));
    expect(demux(bytes).out).toBe("out1\nout2\n");
  });

  it("forwards a large frame's body as it arrives, never whole", () => {
    const big = frame(1, "a".repeat(200_000));
    const chunks: Buffer[] = [];
    for (let i = 0; i < big.length; i += 16_384) chunks.push(big.subarray(i, i + 16_384));
    const r = demux(chunks);
    expect(r.out).toBe("a".repeat(200_000));
    expect(r.pieces).toBe(chunks.length);
  });

  it("reports a stream cut mid-frame", () => {
    const d = new StreamDemuxer({});
    d.push(frame(1, "hello").subarray(0, 10));
    expect(d.partial).toBe(true);
    d.push(frame(1, "hello").subarray(10));
    expect(d.partial).toBe(false);
  });
});
