/**
 * read's image path, as Pi 0.73.1 (found by test/pi): images over 2000 px are scaled down with a note
 * mapping coordinates, undecodable ones are omitted with Pi's note, and (unlike Pi) an image whose
 * header claims more pixels than MAX_DECODE_PIXELS is never decoded.
 */
import { Jimp } from "jimp";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MAX_DECODE_PIXELS } from "../../src/tools/image-resize.js";
import { imageDimensions } from "../../src/tools/image-size.js";
import { createReadTool } from "../../src/tools/read.js";
import type { SpillStore, ToolContent } from "../../src/tools/types.js";
import { FakeSandbox } from "../helpers/fake-sandbox.js";

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
});
