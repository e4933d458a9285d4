/**
 * read's image path, as Pi 0.73.1 (found by test/pi): images over 2000 px are scaled down with a note
 * mapping coordinates, undecodable ones are omitted with Pi's note, and (unlike Pi) an image whose
 * header claims more pixels than MAX_DECODE_PIXELS is never decoded.
 */
import { readdirSync, readFileSync } from "node:fs";
import { Jimp } from "jimp";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  fitImage,
  fitImageFrom,
  IMAGE_DECODE_SLOTS,
  imageDecodeSlots,
  MAX_DECODE_PIXELS,
} from "../../../src/tools/image-resize.js";
import { imageDimensions } from "../../../src/tools/image-size.js";
import { createReadTool } from "../../../src/tools/read.js";
import type { SpillStore, ToolContent } from "../../../src/tools/types.js";
import { FakeSandbox } from "../../helpers/fake-sandbox.js";

let sandbox: FakeSandbox;
const spill = { owns: () => false } as unknown as SpillStore;
const read = (path: string) => createReadTool().execute("c", { path }, { sandbox, spill });
const solid = (width: number, height: number, mime: "image/png" | "image/jpeg" | "image/gif") =>
  new Jimp({ width, height, color: 0x3366ccff }).getBuffer(mime);
const shapes = (content: ToolContent[]) =>
  content.map((b) =>
    b.type === "text"
      ? b.text
      : `${b.mimeType} ${JSON.stringify(imageDimensions(Buffer.from(b.data, "base64"), b.mimeType))}`,
  );

/** This process's worker processes (util/worker-process.ts) → the nice value of each of their threads. */
function workerProcesses(): Map<number, number[]> {
  const found = new Map<number, number[]>();
  const fieldsOf = (path: string) => {
    const stat = readFileSync(path, "utf8");
    return {
      comm: stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")),
      f: stat.slice(stat.lastIndexOf(")") + 2).split(" "),
    };
  };
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const { comm, f } = fieldsOf(`/proc/${pid}/stat`);
      // Field 3: state (a killed worker not yet reaped is a zombie, Z); field 4: ppid.
      if (comm !== "warden-worker" || f[0] === "Z" || Number(f[1]) !== process.pid) continue;
      const nices = readdirSync(`/proc/${pid}/task`).map((tid) =>
        Number(fieldsOf(`/proc/${pid}/task/${tid}/stat`).f[16]),
      );
      found.set(Number(pid), nices); // field 19: nice
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

beforeEach(async () => {
  sandbox = await FakeSandbox.create();
});
afterEach(async () => {
  await sandbox.destroy();
});

describe("read: images", { timeout: 60_000 }, () => {
  it("scales an image wider than 2000 px to fit, with Pi's note mapping coordinates", async () => {
    await sandbox.put("wide.png", await solid(2400, 300, "image/png"));
    const out = await read("wide.png");
    expect(shapes(out.content)).toEqual([
      "Read image file [image/png]\n[Image: original 2400x300, displayed at 2000x250. Multiply coordinates by 1.20 to map to original image.]",
      'image/png {"width":2000,"height":250}',
    ]);
  });

  it("scales a tall JPEG to fit 2000 px high (PNG when it is the smaller encoding under the cap)", async () => {
    await sandbox.put("tall.jpg", await solid(200, 2600, "image/jpeg"));
    const out = await read("tall.jpg");
    expect(shapes(out.content)).toEqual([
      "Read image file [image/png]\n[Image: original 200x2600, displayed at 154x2000. Multiply coordinates by 1.30 to map to original image.]",
      'image/png {"width":154,"height":2000}',
    ]);
  });

  it.runIf(process.platform === "linux")(
    "decodes in a worker process whose every thread is at nice 19, gone once the image is fitted",
    async () => {
      // Before, a worker thread of this process lowered itself only (its garbage was collected at nice 0).
      const image = await solid(2400, 600, "image/png");
      // The decode's process starts while the bytes load: hold them, and look at it meanwhile.
      let open: (b: Buffer) => void = () => {};
      const fitting = fitImageFrom(() => new Promise<Buffer>((resolve) => (open = resolve)), "image/png");
      await expect.poll(() => workerProcesses().size).toBe(1);
      const seen = workerProcesses();
      const [pid] = [...seen.keys()] as [number];
      await expect
        .poll(() =>
          workerProcesses()
            .get(pid)
            ?.every((nice) => nice === 19),
        )
        .toBe(true);
      open(image);
      expect((await fitting).fitted.kind).toBe("resized");
      await expect.poll(() => workerProcesses().has(pid)).toBe(false);
    },
  );

  it.runIf(process.platform === "linux")(
    "a small image is decoded however long its decoder waits for a CPU: the bound is CPU time, not wall time",
    async () => {
      // Issue 36: at nice 19 on a busy host, small images came back "[Image omitted: decoding it took
      // longer than 15 s.]". SIGSTOP starves the decoder completely (no CPU at all) for three times
      // its CPU limit; a wall-clock bound would have omitted the image.
      const png = await solid(64, 32, "image/png");
      let open: (b: Buffer) => void = () => {};
      const fitting = fitImageFrom(() => new Promise<Buffer>((resolve) => (open = resolve)), "image/png", {
        cpuLimitMs: 1000,
      });
      await expect.poll(() => workerProcesses().size).toBe(1);
      const [pid] = [...workerProcesses().keys()] as [number];
      process.kill(pid, "SIGSTOP");
      open(png);
      await new Promise((r) => setTimeout(r, 3000));
      process.kill(pid, "SIGCONT");
      expect((await fitting).fitted).toEqual({ kind: "original", width: 64, height: 32 });
      await expect.poll(() => workerProcesses().has(pid)).toBe(false);

      // The same through read, with the default bound: the exact result, the image as it is.
      await sandbox.put("small.png", png);
      const readFile = sandbox.readFile.bind(sandbox);
      let loaded: () => void = () => {};
      const gate = new Promise<void>((resolve) => (loaded = resolve));
      sandbox.readFile = async (path, range, options) => {
        if (range.kind === "bytes" && range.length === png.length) await gate; // the image's load
        return readFile(path, range, options);
      };
      const reading = read("small.png");
      await expect.poll(() => workerProcesses().size).toBe(1);
      const [again] = [...workerProcesses().keys()] as [number];
      process.kill(again, "SIGSTOP");
      loaded();
      await new Promise((r) => setTimeout(r, 3000));
      process.kill(again, "SIGCONT");
      expect((await reading).content).toEqual([
        { type: "text", text: "Read image file [image/png]" },
        { type: "image", data: png.toString("base64"), mimeType: "image/png" },
      ]);
    },
  );

  it("a decode that uses its CPU-time bound is abandoned, with the reason", async () => {
    expect(await fitImage(await solid(2400, 600, "image/png"), "image/png", { cpuLimitMs: 1 })).toEqual({
      kind: "omitted",
      reason: "cpu-limit",
    });
  });

  it("sends a small image as it is", async () => {
    const gif = await solid(20, 10, "image/gif");
    await sandbox.put("small.gif", gif);
    const out = await read("small.gif");
    expect(out.content).toEqual([
      { type: "text", text: "Read image file [image/gif]" },
      { type: "image", data: gif.toString("base64"), mimeType: "image/gif" },
    ]);
  });

  it("omits a truncated PNG and a GIF without image data, with Pi's note", async () => {
    await sandbox.put("cut.png", (await solid(32, 16, "image/png")).subarray(0, 60));
    await sandbox.put("tiny.gif", Buffer.from("GIF89a\x01\x00\x01\x00\x00\x00\x00;", "latin1"));
    const note = "[Image omitted: could not be resized below the inline image size limit.]";
    expect(shapes((await read("cut.png")).content)).toEqual([`Read image file [image/png]\n${note}`]);
    expect(shapes((await read("tiny.gif")).content)).toEqual([`Read image file [image/gif]\n${note}`]);
  });

  it("never decodes an image whose header claims more than MAX_DECODE_PIXELS", async () => {
    const png = Buffer.from(await solid(4, 4, "image/png"));
    png.writeUInt32BE(30_000, 16);
    png.writeUInt32BE(30_000, 20);
    await sandbox.put("bomb.png", png);
    expect(shapes((await read("bomb.png")).content)).toEqual([
      `Read image file [image/png]\n[Image omitted: 900000000 pixels is over the ${MAX_DECODE_PIXELS} pixel limit for decoding images. Make a smaller copy and read that.]`,
    ]);
  });

  it("never decodes a GIF whose first frame is larger than its 1x1 logical screen (a 4.3 GB allocation)", async () => {
    await sandbox.put("frame-bomb.gif", gifWithFrame(65_535, 65_535));
    expect(shapes((await read("frame-bomb.gif")).content)).toEqual([
      `Read image file [image/gif]\n[Image omitted: 4294836225 pixels is over the ${MAX_DECODE_PIXELS} pixel limit for decoding images. Make a smaller copy and read that.]`,
    ]);
    // A frame within the limit is decoded as before (the logical screen's size is what is sent).
    const small = gifWithFrame(1, 1);
    expect((await fitImage(small, "image/gif")).kind).toBe("original");
  });

  it(`decodes at most ${IMAGE_DECODE_SLOTS} images at once; the others wait their turn`, async () => {
    const png = await solid(16, 16, "image/png");
    const fits = [1, 2, 3, 4, 5].map(() => fitImage(png, "image/png"));
    expect([imageDecodeSlots.running, imageDecodeSlots.waiting]).toEqual([
      IMAGE_DECODE_SLOTS,
      5 - IMAGE_DECODE_SLOTS,
    ]);
    expect((await Promise.all(fits)).map((f) => f.kind)).toEqual(Array(5).fill("original"));
    expect([imageDecodeSlots.running, imageDecodeSlots.waiting]).toEqual([0, 0]);
  });

  it("a read waiting for a decode slot has not loaded its image yet (waiting calls hold no bytes)", async () => {
    const png = await solid(16, 16, "image/png");
    const opens: ((b: Buffer) => void)[] = [];
    const busy = [1, 2].map(() =>
      fitImageFrom(() => new Promise<Buffer>((resolve) => opens.push(resolve)), "image/png"),
    );
    let loaded = 0;
    const third = fitImageFrom(async () => {
      loaded++;
      return png;
    }, "image/png");
    await new Promise((r) => setImmediate(r));
    expect([loaded, imageDecodeSlots.waiting]).toEqual([0, 1]);
    for (const open of opens) open(png);
    expect((await third).fitted.kind).toBe("original");
    expect(loaded).toBe(1);
    await Promise.all(busy);
  });

  it("a decode waiting for a slot stops when its call is aborted, and gives its place up", async () => {
    const png = await solid(16, 16, "image/png");
    const running = [1, 2].map(() => fitImage(png, "image/png"));
    const controller = new AbortController();
    const waiting = fitImage(png, "image/png", { signal: controller.signal });
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ name: "AbortError" });
    expect(imageDecodeSlots.waiting).toBe(0);
    await Promise.all(running);
  });
});

/** A GIF with a 1x1 logical screen and one width x height frame of a few pixels of LZW data. */
function gifWithFrame(width: number, height: number): Buffer {
  const screen = Buffer.from([1, 0, 1, 0, 0x80, 0, 0, 0, 0, 0, 255, 255, 255]);
  const descriptor = Buffer.alloc(10);
  descriptor[0] = 0x2c;
  descriptor.writeUInt16LE(width, 5);
  descriptor.writeUInt16LE(height, 7);
  // LZW, minimum code size 2: clear (4), index 0, end (5), as 3-bit codes: 100 000 101 -> 0x04 0x01.
  const data = Buffer.from([2, 2, 0x44, 0x01, 0]);
  return Buffer.concat([Buffer.from("GIF89a", "latin1"), screen, descriptor, data, Buffer.from([0x3b])]);
}
