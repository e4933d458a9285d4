/**
 * The shared frame vectors (images/sandbox/helper/testdata/frames.json), also read by the helper's
 * frame_vectors_test.go: the controller builds every request vector byte for byte through its real
 * request functions, and reads every reply vector through its real readers.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { NotFoundError } from "../../../../../src/errors.js";
import { ChannelClient, type ChannelTransport } from "../../../../../src/sandbox/channel/protocol/client.js";
import { channelExec } from "../../../../../src/sandbox/channel/protocol/exec.js";
import {
  channelListDir,
  channelReadFile,
  channelRealpath,
  channelStat,
  channelUntar,
  channelWriteFile,
} from "../../../../../src/sandbox/channel/protocol/files.js";
import {
  decodeJsonData,
  encodeFrame,
  type Frame,
  FrameDecoder,
  FrameType,
  type FrameTypeCode,
  HEADER_BYTES,
  MAX_PAYLOAD_BYTES,
} from "../../../../../src/sandbox/channel/protocol/frame.js";
import { toExitBody, toReadResultBody } from "../../../../../src/sandbox/channel/protocol/messages.js";
import type { ReadRange } from "../../../../../src/sandbox/types.js";

type Payload = { text?: string; hex?: string; fill?: number; length?: number };
interface FrameVector {
  name: string;
  direction: "controller-to-helper" | "helper-to-controller";
  type: keyof typeof FrameType;
  id: number;
  header: string;
  payload: Payload;
  schema?: string;
  body?: unknown;
  data?: string;
}
interface Vectors {
  headerBytes: number;
  maxPayloadBytes: number;
  types: Record<string, number>;
  frames: FrameVector[];
  rejectedFrames: { name: string; hex: string }[];
  rejectedJsonData: { name: string; hex: string }[];
  incomplete: { name: string; hex: string }[];
}

const vectors = JSON.parse(
  readFileSync(
    join(import.meta.dirname, "../../../../../images/sandbox/helper/testdata/frames.json"),
    "utf8",
  ),
) as Vectors;

function payloadOf(p: Payload): Buffer {
  if (p.text !== undefined) return Buffer.from(p.text, "utf8");
  if (p.hex !== undefined) return Buffer.from(p.hex, "hex");
  return Buffer.alloc(p.length ?? 0, p.fill ?? 0);
}

function decodeAll(bytes: Buffer, chunkBytes: number): Frame[] {
  const frames: Frame[] = [];
  const decoder = new FrameDecoder((f) => frames.push({ ...f, payload: Buffer.from(f.payload) }));
  for (let i = 0; i < bytes.length; i += chunkBytes) decoder.push(bytes.subarray(i, i + chunkBytes));
  return frames;
}

/** A client whose transport records what it writes and never answers on its own. */
function recordingClient(): { client: ChannelClient; written: Frame[]; reply(frame: Buffer): void } {
  const written: Frame[] = [];
  const decoder = new FrameDecoder((f) => written.push({ ...f, payload: Buffer.from(f.payload) }));
  let onData: (chunk: Buffer) => void = () => {};
  const transport: ChannelTransport = {
    write: (chunk) => decoder.push(chunk),
    start: (sinks) => {
      onData = sinks.onData;
    },
    close: () => {},
  };
  const client = new ChannelClient(transport, { containerId: "vectors" });
  return { client, written, reply: (frame) => onData(frame) };
}

/** The controller's own request for a request vector, as its public functions send it. */
async function sendRequest(v: FrameVector): Promise<Buffer> {
  const { client, written, reply } = recordingClient();
  const stop = new AbortController();
  const body = v.body as Record<string, unknown>;
  const data = Buffer.from(v.data ?? "", "hex");
  let call: Promise<unknown>;
  if (v.schema === "exec" || v.schema === "kill") {
    const script = (body.argv as string[] | undefined)?.[2] ?? "sleep 9";
    call = channelExec(client, { shell: script }, { env: { A: "b c" }, signal: stop.signal });
  } else if (v.schema === "read") {
    const { path, countLines: _counted, ...range } = body as { path: string; countLines?: boolean };
    call = channelReadFile(client, path, range as ReadRange, { signal: stop.signal });
  } else if (v.schema === "write") {
    call = channelWriteFile(client, body.path as string, data, {
      mode: body.mode as number,
      signal: stop.signal,
    });
  } else if (v.schema === "untar") {
    call = channelUntar(client, body.dir as string, data, { signal: stop.signal });
  } else {
    const op = { stat: channelStat, realpath: channelRealpath, listDir: channelListDir }[
      v.type as "stat" | "realpath" | "listDir"
    ];
    call = op(client, body.path as string, { signal: stop.signal });
  }
  call.catch(() => {});
  stop.abort(); // a command's abort sends its kill frame, with the grace the controller uses
  if (v.schema === "exec" || v.schema === "kill") {
    reply(encodeFrame(FrameType.exit, written[0]!.id, Buffer.from('{"code":143}')));
    await call;
  }
  return written[v.schema === "kill" ? 1 : 0]!.payload;
}

describe("channel frame vectors shared with warden-helper (testdata/frames.json)", () => {
  it("name the same frame types, header size and payload limit as the controller", () => {
    expect(vectors.types).toEqual(FrameType);
    expect(vectors.headerBytes).toBe(HEADER_BYTES);
    expect(vectors.maxPayloadBytes).toBe(MAX_PAYLOAD_BYTES);
  });

  it.each(vectors.frames.map((v) => [v.name, v] as const))("%s: encodes and decodes", (_name, v) => {
    const payload = payloadOf(v.payload);
    const bytes = Buffer.concat([Buffer.from(v.header, "hex"), payload]);
    const type = vectors.types[v.type] as FrameTypeCode;
    expect(encodeFrame(type, v.id, payload).equals(bytes)).toBe(true);
    for (const chunk of [bytes.length, 4]) {
      if (chunk === 4 && bytes.length > 1 << 20) continue; // byte-by-byte for the small frames only
      const [frame, ...more] = decodeAll(bytes, chunk);
      expect(more).toEqual([]);
      expect({ type: frame?.type, id: frame?.id }).toEqual({ type, id: v.id });
      expect(frame?.payload.equals(payload)).toBe(true);
    }
  });

  const requests = vectors.frames.filter((v) => v.direction === "controller-to-helper" && v.schema);
  it.each(requests.map((v) => [v.name, v] as const))("%s: the controller sends exactly it", async (_n, v) => {
    expect((await sendRequest(v)).equals(payloadOf(v.payload))).toBe(true);
  });

  it("the controller reads every reply vector's body", async () => {
    const replies = vectors.frames.filter((v) => v.direction === "helper-to-controller" && v.schema);
    for (const v of replies) {
      const payload = payloadOf(v.payload);
      if (v.schema === "exit") expect(toExitBody(JSON.parse(payload.toString()))).toEqual(v.body);
      else if (v.schema === "readResult") {
        const { json, data } = decodeJsonData(payload);
        expect(toReadResultBody(json)).toEqual(v.body);
        expect(data.toString("hex")).toBe(v.data);
      } else expect(JSON.parse(payload.toString("utf8"))).toEqual(v.body);
    }
    // Through the client: an error reply becomes the mapped warden error, a stat reply the FileStat.
    const error = replies.find((v) => v.schema === "error")!;
    const stat = replies.find((v) => v.schema === "stat" && v.body !== null)!;
    for (const [v, expected] of [
      [error, NotFoundError],
      [stat, stat.body],
    ] as const) {
      const { client, written, reply } = recordingClient();
      const pending = channelStat(client, "/workspace/x");
      reply(encodeFrame(vectors.types[v.type] as FrameTypeCode, written[0]!.id, payloadOf(v.payload)));
      if (expected === NotFoundError) await expect(pending).rejects.toBeInstanceOf(NotFoundError);
      else expect(await pending).toEqual(expected);
    }
  });

  it.each(vectors.rejectedFrames.map((v) => [v.name, v] as const))("%s: the decoder refuses it", (_n, v) => {
    expect(() => decodeAll(Buffer.from(v.hex, "hex"), 64)).toThrow(/exceeds/);
  });

  it.each(vectors.rejectedJsonData.map((v) => [v.name, v] as const))("%s: refused", (_n, v) => {
    expect(() => decodeJsonData(Buffer.from(v.hex, "hex"))).toThrow();
  });

  it.each(vectors.incomplete.map((v) => [v.name, v] as const))("%s: held until more bytes come", (_n, v) => {
    const bytes = Buffer.from(v.hex, "hex");
    const frames: Frame[] = [];
    const decoder = new FrameDecoder((f) => frames.push(f));
    decoder.push(bytes);
    expect(frames).toEqual([]);
    expect(decoder.pendingBytes).toBe(bytes.length);
  });

  it("a payload one byte over the limit is refused when encoding", () => {
    expect(() => encodeFrame(FrameType.write, 1, Buffer.alloc(vectors.maxPayloadBytes + 1))).toThrow(
      /exceeds/,
    );
  });
});
