/**
 * Image dimensions from a file's header, without decoding it (PNG IHDR, GIF logical screen, JPEG SOFn,
 * WebP VP8/VP8L/VP8X, BMP info header). Used to refuse an image too large to decode before any
 * decoder allocates its pixels.
 */

/** Width and height in pixels. */
export interface ImageDimensions {
  width: number;
  height: number;
}

function jpegDimensions(data: Buffer): ImageDimensions | undefined {
  let i = 2;
  while (i + 9 < data.length) {
    if (data[i] !== 0xff) return undefined;
    const marker = data[i + 1] ?? 0;
    if (marker === 0xff) {
      i++;
      continue;
    }
    const length = data.readUInt16BE(i + 2);
    // SOF0..SOF15 carry the frame size, except DHT (C4), JPG (C8) and DAC (CC).
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { width: data.readUInt16BE(i + 7), height: data.readUInt16BE(i + 5) };
    }
    i += 2 + length;
  }
  return undefined;
}

function webpDimensions(data: Buffer): ImageDimensions | undefined {
  if (data.length < 30) return undefined;
  const chunk = data.toString("latin1", 12, 16);
  if (chunk === "VP8X") return { width: data.readUIntLE(24, 3) + 1, height: data.readUIntLE(27, 3) + 1 };
  if (chunk === "VP8L") {
    const bits = data.readUInt32LE(21);
    return { width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1 };
  }
  if (chunk === "VP8 ")
    return { width: data.readUInt16LE(26) & 0x3fff, height: data.readUInt16LE(28) & 0x3fff };
  return undefined;
}

/** Dimensions of an image of type `mimeType` from its first bytes; undefined when the header is unreadable. */
export function imageDimensions(data: Buffer, mimeType: string): ImageDimensions | undefined {
  switch (mimeType) {
    case "image/png":
      return data.length >= 24 ? { width: data.readUInt32BE(16), height: data.readUInt32BE(20) } : undefined;
    case "image/gif":
      return data.length >= 10 ? { width: data.readUInt16LE(6), height: data.readUInt16LE(8) } : undefined;
    case "image/jpeg":
      return jpegDimensions(data);
    case "image/webp":
      return webpDimensions(data);
    case "image/bmp":
      return data.length >= 26
        ? { width: data.readInt32LE(18), height: Math.abs(data.readInt32LE(22)) }
        : undefined;
    default:
      return undefined;
  }
}
