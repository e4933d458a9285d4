/**
 * Image detection by magic bytes, as Pi's read tool does (jpeg, png, gif, webp, bmp), so a file's
 * name never decides. Signatures: PNG spec §5.2, JFIF/EXIF SOI marker, GIF87a/89a, RIFF "WEBP",
 * BMP "BM" with its zero reserved fields.
 */

const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

function startsWith(head: Buffer, bytes: readonly number[], at = 0): boolean {
  return bytes.every((b, i) => head[at + i] === b);
}

function ascii(head: Buffer, text: string, at = 0): boolean {
  return head.length >= at + text.length && head.toString("latin1", at, at + text.length) === text;
}

/** The image MIME type of a file starting with `head`, or null when it is not a supported image. */
export function detectImageMimeType(head: Buffer): string | null {
  if (startsWith(head, PNG)) return "image/png";
  if (startsWith(head, [0xff, 0xd8, 0xff])) return "image/jpeg";
  if (ascii(head, "GIF87a") || ascii(head, "GIF89a")) return "image/gif";
  if (ascii(head, "RIFF") && ascii(head, "WEBP", 8)) return "image/webp";
  if (ascii(head, "BM") && head.length >= 10 && head.readUInt32LE(6) === 0) return "image/bmp";
  return null;
}
