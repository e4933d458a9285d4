/**
 * read fits images with jimp's own parts (@jimp/core, its PNG, JPEG, GIF and BMP codecs and the
 * resize plugin; src/tools/image-resize.ts) rather than the whole `jimp` package: the image it
 * sends is byte for byte the one the whole package makes from the same file.
 */
import { Jimp } from "jimp";
import { describe, expect, it } from "vitest";
import { fitImage, MAX_IMAGE_SIDE } from "../../../src/tools/image-resize.js";

// Decodes run at nice 19 in a process of their own: on a loaded machine a large one takes a while.
// The test's own timeout: the decode is bounded by CPU time (IMAGE_DECODE_CPU_MS), not by the host's load.
const TEST_MS = 240_000;

/** A 2100×300 image with a pattern (so its encodings are not trivial), encoded as `mime`. */
async function patterned(mime: "image/png" | "image/jpeg" | "image/bmp"): Promise<Buffer> {
  const image = new Jimp({ width: 2100, height: 300, color: 0x3366ccff });
  const data = image.bitmap.data;
  for (let i = 0; i < data.length; i += 4) data[i] = (i >> 12) & 255;
  return mime === "image/jpeg" ? image.getBuffer(mime, { quality: 90 }) : image.getBuffer(mime);
}

describe("read's image fitting and the whole jimp package", () => {
  for (const mime of ["image/png", "image/jpeg", "image/bmp"] as const) {
    it(
      `scales a ${mime} to the same PNG bytes`,
      async () => {
        const input = await patterned(mime);
        const fitted = await fitImage(input, mime);
        const height = Math.round((300 * MAX_IMAGE_SIDE) / 2100);
        expect(fitted).toMatchObject({ kind: "resized", mimeType: "image/png", width: 2000, height });
        const whole = await Jimp.fromBuffer(input);
        const expected = await whole.resize({ w: 2000, h: height }).getBuffer("image/png");
        expect(fitted.kind === "resized" && Buffer.compare(fitted.data, expected)).toBe(0);
      },
      TEST_MS,
    );
  }
});
