/**
 * The worker module of image-resize.ts's decodes (a process per decode, util/worker-process.ts):
 * decode, check, and if needed fit one image, as that module's docstring describes (Pi 0.73.1's
 * read: scale to fit maxSide, PNG, then JPEG at qualities 80, 85, 70, 55, 40, then a quarter
 * smaller and again, down to 1×1). jimp is its own parts as image-resize.ts lists them, loaded as
 * CommonJS from this module's place; a GIF's first frame is checked with omggif as jimp's GIF
 * decoder loads it, so the frame checked is the frame that decoder allocates for.
 */
import { createRequire } from "node:module";
import type { DecodeJob, FittedImage } from "./image-resize.js";

interface JimpImage {
  bitmap: { width: number; height: number };
  clone(): JimpImage;
  resize(size: { w: number; h: number }): JimpImage;
  getBuffer(mimeType: string, options?: { quality: number }): Promise<Buffer>;
}

const requireHere = createRequire(import.meta.url);
const gifPath = requireHere.resolve("@jimp/js-gif");
const bmp = requireHere("@jimp/js-bmp");
const Jimp = requireHere("@jimp/core").createJimp({
  formats: [
    bmp.default,
    bmp.msBmp,
    requireHere(gifPath).default,
    requireHere("@jimp/js-jpeg").default,
    requireHere("@jimp/js-png").default,
  ],
  plugins: [requireHere("@jimp/plugin-resize").methods],
}) as { fromBuffer(buffer: Buffer): Promise<JimpImage> };
const { GifReader } = createRequire(gifPath)("omggif") as {
  GifReader: new (
    buffer: Buffer,
  ) => { numFrames(): number; frameInfo(index: number): { width: number; height: number } };
};

const b64 = (n: number) => Math.ceil(n / 3) * 4;

/** The FittedImage of `job` (never throws: an image that cannot be decoded is "unreadable"). */
export async function runJob(job: DecodeJob): Promise<FittedImage> {
  const { maxSide, maxBase64, maxPixels, mimeType } = job;
  try {
    const buffer = Buffer.from(job.data);
    if (mimeType === "image/gif") {
      // omggif allocates the first frame's width x height, which the logical screen does not bound.
      const reader = new GifReader(buffer);
      const frame = reader.numFrames() > 0 ? reader.frameInfo(0) : undefined;
      if (frame && frame.width * frame.height > maxPixels) {
        return { kind: "omitted", reason: "too-many-pixels", pixels: frame.width * frame.height };
      }
    }
    const image = await Jimp.fromBuffer(buffer);
    const W = image.bitmap.width;
    const H = image.bitmap.height;
    if (W <= maxSide && H <= maxSide && b64(job.data.byteLength) < maxBase64) {
      return { kind: "original", width: W, height: H };
    }
    let w = W;
    let h = H;
    if (w > maxSide) {
      h = Math.round((h * maxSide) / w);
      w = maxSide;
    }
    if (h > maxSide) {
      w = Math.round((w * maxSide) / h);
      h = maxSide;
    }
    w = Math.max(1, w);
    h = Math.max(1, h);
    for (;;) {
      const resized = image.clone().resize({ w, h });
      const candidates: Array<[string, () => Promise<Buffer>]> = [
        ["image/png", () => resized.getBuffer("image/png")],
      ];
      for (const quality of [80, 85, 70, 55, 40])
        candidates.push(["image/jpeg", () => resized.getBuffer("image/jpeg", { quality })]);
      for (const [type, encode] of candidates) {
        const data = await encode();
        if (b64(data.length) < maxBase64) {
          return {
            kind: "resized",
            data,
            mimeType: type,
            width: w,
            height: h,
            originalWidth: W,
            originalHeight: H,
          };
        }
      }
      const nw = w === 1 ? 1 : Math.max(1, Math.floor(w * 0.75));
      const nh = h === 1 ? 1 : Math.max(1, Math.floor(h * 0.75));
      if (nw === w && nh === h) return { kind: "omitted", reason: "too-large" };
      w = nw;
      h = nh;
    }
  } catch {
    return { kind: "omitted", reason: "unreadable" };
  }
}
