/**
 * read's image half: an image file (detected by magic bytes) is read whole, fitted for the model as
 * Pi 0.73.1 does (image-resize.ts: scaled to fit 2000×2000 with a note mapping coordinates, or
 * omitted with Pi's note when it cannot be decoded), and returned as an image block.
 */
import { formatSize } from "../truncate/index.js";
import { omitUndefined } from "../util/index.js";
import {
  type FittedImage,
  fitImageFrom,
  IMAGE_DECODE_CPU_MS,
  IMAGE_DECODE_TIMEOUT_MS,
  MAX_DECODE_PIXELS,
} from "./image-resize.js";
import type { ReadSource } from "./read-text.js";
import type { ToolOutput } from "./types.js";

/** Largest image file read to be sent (20 MiB): larger ones are not read, a note says so. */
const MAX_IMAGE_BYTES = 20 * 1024 * 1024;

/** details.image of a read: the type and size sent (or of the file, when nothing was sent). */
export interface ReadImageDetails {
  spill?: boolean;
  image?: { mimeType: string; bytes: number; returned: boolean };
}

/** Reads the image at `source` (`size` bytes) and words the result. Rejects only on I/O errors or abort. */
export async function readImage(
  source: ReadSource,
  mimeType: string,
  size: number,
  signal: AbortSignal | undefined,
): Promise<ToolOutput<ReadImageDetails>> {
  const spill = source.isSpill ? { spill: true } : {};
  const notSent = (note: string): ToolOutput<ReadImageDetails> => ({
    content: [{ type: "text", text: `Read image file [${mimeType}]\n${note}` }],
    details: { ...spill, image: { mimeType, bytes: size, returned: false } },
  });
  if (size > MAX_IMAGE_BYTES) {
    return notSent(
      `[Image omitted: the file is ${formatSize(size)}, over the ${formatSize(MAX_IMAGE_BYTES)} limit for images. ` +
        "Make a smaller copy and read that.]",
    );
  }
  const load = async () => (await source.read({ kind: "bytes", offset: 0, length: size })).data;
  const { data, fitted } = await fitImageFrom(load, mimeType, omitUndefined({ signal }));
  if (fitted.kind === "omitted") return notSent(omittedImageNote(fitted));
  if (fitted.kind === "original") {
    return {
      content: [
        { type: "text", text: `Read image file [${mimeType}]` },
        { type: "image", data: data.toString("base64"), mimeType },
      ],
      details: { ...spill, image: { mimeType, bytes: data.length, returned: true } },
    };
  }
  const scale = (fitted.originalWidth / fitted.width).toFixed(2);
  const note =
    `[Image: original ${fitted.originalWidth}x${fitted.originalHeight}, displayed at ${fitted.width}x${fitted.height}. ` +
    `Multiply coordinates by ${scale} to map to original image.]`;
  return {
    content: [
      { type: "text", text: `Read image file [${fitted.mimeType}]\n${note}` },
      { type: "image", data: fitted.data.toString("base64"), mimeType: fitted.mimeType },
    ],
    details: { ...spill, image: { mimeType: fitted.mimeType, bytes: fitted.data.length, returned: true } },
  };
}

/** Pi's note for an image it could not send; warden's own for its decoding bounds. */
function omittedImageNote(fitted: Extract<FittedImage, { kind: "omitted" }>): string {
  if (fitted.reason === "too-many-pixels") {
    return (
      `[Image omitted: ${fitted.pixels} pixels is over the ${MAX_DECODE_PIXELS} pixel limit for decoding ` +
      "images. Make a smaller copy and read that.]"
    );
  }
  if (fitted.reason === "cpu-limit") {
    return `[Image omitted: decoding it took more than ${IMAGE_DECODE_CPU_MS / 1000} s of CPU time.]`;
  }
  if (fitted.reason === "timeout") {
    return `[Image omitted: decoding it took longer than ${IMAGE_DECODE_TIMEOUT_MS / 1000} s.]`;
  }
  return "[Image omitted: could not be resized below the inline image size limit.]";
}
