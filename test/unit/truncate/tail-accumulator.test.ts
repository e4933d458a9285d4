import { describe, expect, it } from "vitest";
import { sanitizeOutput } from "../../../src/truncate/sanitize.js";
import { truncateTail } from "../../../src/truncate/tail.js";
import { TailAccumulator } from "../../../src/truncate/tail-accumulator.js";

function pushAll(input: Buffer, chunkBytes: number): TailAccumulator {
  const acc = new TailAccumulator();
  for (let i = 0; i < input.length; i += chunkBytes) acc.push(input.subarray(i, i + chunkBytes));
  return acc;
}

describe("TailAccumulator", () => {
  it("matches truncateTail of the whole input, whatever the chunk size", () => {
    const inputs = [
      Buffer.from(Array.from({ length: 3000 }, (_, i) => `${i + 1}\n`).join("")),
      Buffer.from("€".repeat(20_000)),
      Buffer.from(`head\n${"q".repeat(70_000)}\ntail line\n`),
      Buffer.from("a\r\nb\n".repeat(30_000)),
      Buffer.alloc(0),
    ];
    for (const input of inputs) {
      for (const chunk of [1, 7, 4096, 65_536, 1_000_000]) {
        if (chunk === 1 && input.length > 100_000) continue;
        expect(pushAll(input, chunk).snapshot()).toEqual(truncateTail(input));
      }
    }
  });

  it("memory stays bounded: 100 MiB pushed, at most 2 x maxBytes + 2 held", () => {
    const acc = new TailAccumulator();
    const chunk = Buffer.from("0123456789abcdef\n".repeat(4096)); // 69,632 bytes
    let maxHeld = 0;
    for (let i = 0; i < 1506; i++) {
      acc.push(chunk);
      maxHeld = Math.max(maxHeld, acc.heldBytes);
    }
    expect(maxHeld).toBeLessThanOrEqual(2 * 51_200 + 2);
    expect(acc.totalBytes).toBe(1506 * 69_632);
    expect(acc.totalLines).toBe(1506 * 4096);
    const r = acc.snapshot();
    expect(r.outputLines).toBe(2000);
    expect(r.truncatedBy).toBe("lines");
  });

  it("reports the last line's size for Pi's 'line is N' notice", () => {
    const acc = new TailAccumulator();
    acc.push(Buffer.from("ab\ncdef"));
    expect(acc.lastLineBytes).toBe(4);
    acc.push(Buffer.from("gh\n"));
    expect(acc.lastLineBytes).toBe(6);
    acc.push(Buffer.from("\n"));
    expect(acc.lastLineBytes).toBe(0);
  });

  it("case 15: '€' x 20000 through sanitiser and accumulator is valid UTF-8, <= 51,200 bytes, starts on E2", () => {
    const acc = pushAll(Buffer.from(sanitizeOutput(Buffer.from("€".repeat(20_000))).text), 4096);
    const r = acc.snapshot();
    const bytes = Buffer.from(r.content);
    expect(bytes.length).toBe(51_198);
    expect(bytes[0]).toBe(0xe2);
    expect(r.content).not.toContain("\uFFFD");
    expect(Buffer.from(bytes.toString("utf8")).equals(bytes)).toBe(true);
  });

  it("case 15: 8000 coloured 'ab' (88 KB) leave no orphan '31m' and no ESC", () => {
    const raw = Buffer.from("\x1b[31mab\x1b[0m".repeat(8000));
    expect(raw.length).toBe(88_000);
    const r = pushAll(Buffer.from(sanitizeOutput(raw).text), 1000).snapshot();
    expect(r.content).toBe("ab".repeat(8000));
    expect(r.content).not.toContain("\x1b");
    expect(r.content).not.toMatch(/\d+m/);
  });
});
