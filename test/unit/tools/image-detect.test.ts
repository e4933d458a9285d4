import { describe, expect, it } from "vitest";
import { detectImageMimeType } from "../../../src/tools/image-detect.js";

const bytes = (...parts: (string | number[])[]) =>
  Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p, "latin1") : Buffer.from(p))));

describe("detectImageMimeType (magic bytes, as Pi)", () => {
  it("recognises png, jpeg, gif, webp and bmp", () => {
    expect(detectImageMimeType(bytes([0x89], "PNG\r\n\x1a\n", [0, 0]))).toBe("image/png");
    expect(detectImageMimeType(bytes([0xff, 0xd8, 0xff, 0xe0]))).toBe("image/jpeg");
    expect(detectImageMimeType(bytes("GIF89a", [1, 0]))).toBe("image/gif");
    expect(detectImageMimeType(bytes("GIF87a"))).toBe("image/gif");
    expect(detectImageMimeType(bytes("RIFF", [0x24, 0, 0, 0], "WEBPVP8 "))).toBe("image/webp");
    expect(detectImageMimeType(bytes("BM", [0x3a, 0, 0, 0, 0, 0, 0, 0, 0x36, 0]))).toBe("image/bmp");
  });

  it("rejects text that merely starts like one, and short input", () => {
    expect(detectImageMimeType(bytes("BMW is a car\n"))).toBeNull();
    expect(detectImageMimeType(bytes("RIFF", [0, 0, 0, 0], "WAVEfmt "))).toBeNull();
    expect(detectImageMimeType(bytes([0x89, 0x50]))).toBeNull();
    expect(detectImageMimeType(Buffer.alloc(0))).toBeNull();
  });
});
