import { describe, expect, it } from "vitest";
import { OutputSanitizer, sanitizeOutput } from "../../../src/truncate/sanitize.js";

/** Feeds `input` one byte at a time (every possible split point). */
function byteByByte(input: Buffer): { text: string; replacedBytes: number } {
  const s = new OutputSanitizer();
  const parts: Buffer[] = [];
  for (const byte of input) parts.push(s.push(Buffer.from([byte])));
  parts.push(s.end());
  return { text: Buffer.concat(parts).toString("utf8"), replacedBytes: s.replacedBytes };
}

describe("sanitizeOutput", () => {
  it("case 16: printf 'ok\\xff\\xfe\\x00end\\n' gives valid text with no NUL and 3 replaced bytes", () => {
    const r = sanitizeOutput(Buffer.from([0x6f, 0x6b, 0xff, 0xfe, 0x00, 0x65, 0x6e, 0x64, 0x0a]));
    expect(r).toEqual({ text: "ok\uFFFD\uFFFD\uFFFDend\n", replacedBytes: 3 });
  });

  it("keeps valid multibyte text byte for byte, even split across chunks", () => {
    const input = Buffer.from("€ ö 𝄞 end");
    expect(byteByByte(input)).toEqual({ text: "€ ö 𝄞 end", replacedBytes: 0 });
  });

  it("replaces overlongs, surrogates and a truncated final character", () => {
    const r = sanitizeOutput(Buffer.from([0xc0, 0xaf, 0xed, 0xa0, 0x80, 0x41, 0xe2, 0x82]));
    expect(r.text).toBe("\uFFFD\uFFFD\uFFFD\uFFFD\uFFFDA\uFFFD\uFFFD");
    expect(r.replacedBytes).toBe(7);
  });

  it("case 15: strips SGR sequences, even when every byte is its own chunk", () => {
    const input = Buffer.from("\x1b[31mab\x1b[0m".repeat(3));
    expect(sanitizeOutput(input).text).toBe("ababab");
    expect(byteByByte(input).text).toBe("ababab");
  });

  it("strips OSC titles (BEL or ST), charset escapes and two-byte escapes; a lone ESC at the end vanishes", () => {
    const input = Buffer.from("a\x1b]0;title\x07b\x1b]8;;http://x\x1b\\c\x1b(Bd\x1b7e\x1b");
    expect(sanitizeOutput(input).text).toBe("abcde");
  });

  it("an escape interrupted by a newline drops the escape and keeps the newline", () => {
    expect(sanitizeOutput(Buffer.from("x\x1b[12\ny")).text).toBe("x\ny");
  });

  it("keeps ANSI when stripAnsi is false (file reads)", () => {
    expect(sanitizeOutput(Buffer.from("\x1b[1mB"), { stripAnsi: false }).text).toBe("\x1b[1mB");
  });
});
