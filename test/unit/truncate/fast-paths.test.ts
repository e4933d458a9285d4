import { describe, expect, it } from "vitest";
import { countNewlines } from "../../../src/truncate/lines.js";
import { OutputSanitizer } from "../../../src/truncate/sanitize.js";

function naiveNewlines(buf: Buffer): number {
  return [...buf].filter((b) => b === 0x0a).length;
}

describe("fast paths of the output pipeline give the same answers as the slow ones", () => {
  it("countNewlines: sparse, dense (switches to the loop), and dense after a sparse start", () => {
    const sparse = Buffer.from(`${"a".repeat(999)}\n`.repeat(100));
    const dense = Buffer.from("y\n".repeat(50_000));
    const mixed = Buffer.concat([Buffer.from(`${"b".repeat(5000)}\n`), dense, Buffer.from("tail")]);
    for (const buf of [sparse, dense, mixed, Buffer.from(""), Buffer.from("\n")]) {
      expect(countNewlines(buf)).toBe(naiveNewlines(buf));
    }
    expect(countNewlines(dense)).toBe(50_000);
  });

  it("countNewlines: the word-at-a-time count is exact at every alignment and for near-miss bytes", () => {
    // 0x0b, 0x08, 0x8a, 0x0a|0x80 and 0x00/0xff differ from "\n" in one bit or sit at lane edges.
    const near = Buffer.from([0x0a, 0x0b, 0x8a, 0x08, 0x00, 0xff, 0x0a, 0x0a, 0x2a, 0x0e, 0x4a, 0x1a]);
    const body = Buffer.concat([
      Buffer.from("y\n".repeat(80)),
      Buffer.alloc(600, near),
      Buffer.from("\n".repeat(300)),
    ]);
    for (let start = 0; start < 8; start++) {
      for (const end of [body.length, body.length - 1, body.length - 3, 170, 171, 420]) {
        const slice = body.subarray(start, end);
        expect([start, end, countNewlines(slice)]).toEqual([start, end, naiveNewlines(slice)]);
      }
    }
    // More than 64 words of newlines in a row: every 8-bit lane is folded before it overflows.
    expect(countNewlines(Buffer.alloc(4096 * 4 + 3, 0x0a))).toBe(4096 * 4 + 3);
  });

  it("OutputSanitizer returns plain ASCII untouched, and still cleans a following chunk", () => {
    const s = new OutputSanitizer();
    const plain = Buffer.from("abc\ndef\n");
    expect(s.push(plain)).toBe(plain);
    expect(s.push(Buffer.from("x\x1b[31my\x00")).toString()).toBe("xy\uFFFD");
    expect(s.replacedBytes).toBe(1);
    // A chunk that starts inside an escape split across chunks is not taken by the fast path.
    const split = new OutputSanitizer();
    expect(split.push(Buffer.from("a\x1b[3")).toString()).toBe("a");
    expect(split.push(Buffer.from("1mb")).toString()).toBe("b");
  });
});
