import { describe, expect, it } from "vitest";
import { truncateHead } from "../../../src/truncate/head.js";
import { truncateTail } from "../../../src/truncate/tail.js";
import { formatSize } from "../../../src/truncate/types.js";

const numbered = (n: number) => Array.from({ length: n }, (_, i) => `${i + 1}\n`).join("");

describe("formatSize (Pi's wording)", () => {
  it("uses B, KB with one decimal, MB with one decimal", () => {
    expect([
      formatSize(0),
      formatSize(1023),
      formatSize(51_200),
      formatSize(1536),
      formatSize(2 * 1024 * 1024),
    ]).toEqual(["0B", "1023B", "50.0KB", "1.5KB", "2.0MB"]);
  });
});

describe("truncateHead", () => {
  it("returns empty input unchanged with zero lines", () => {
    expect(truncateHead("")).toEqual({
      content: "",
      truncated: false,
      truncatedBy: null,
      totalLines: 0,
      totalBytes: 0,
      outputLines: 0,
      outputBytes: 0,
      lastLinePartial: false,
      firstLineExceedsLimit: false,
      maxLines: 2000,
      maxBytes: 51_200,
    });
  });

  it("keeps exactly 2000 lines whole (a final newline terminates, it is not a line)", () => {
    const input = numbered(2000);
    const r = truncateHead(input);
    expect(r.truncated).toBe(false);
    expect(r.totalLines).toBe(2000);
    expect(r.content).toBe(input);
    expect(r.outputBytes).toBe(Buffer.byteLength(input));
  });

  it("cuts 2001 lines to 2000 by lines, without the last newline", () => {
    const r = truncateHead(numbered(2001));
    expect(r.truncated).toBe(true);
    expect(r.truncatedBy).toBe("lines");
    expect(r.totalLines).toBe(2001);
    expect(r.outputLines).toBe(2000);
    expect(r.content).toBe(numbered(2000).slice(0, -1));
    expect(r.outputBytes).toBe(Buffer.byteLength(numbered(2000)) - 1);
  });

  it("keeps exactly 51,200 bytes and cuts at 51,201", () => {
    const line = `${"x".repeat(99)}\n`; // 100 bytes
    const exact = line.repeat(512); // 51,200 bytes, 512 lines
    expect(truncateHead(exact).truncated).toBe(false);
    const over = `${exact}y`;
    const r = truncateHead(over);
    expect(r.truncatedBy).toBe("bytes");
    expect(r.outputLines).toBe(512);
    expect(r.outputBytes).toBe(51_199);
    expect(r.totalBytes).toBe(51_201);
    expect(r.totalLines).toBe(513);
  });

  it("a first line over the byte limit gives empty content and firstLineExceedsLimit", () => {
    const r = truncateHead(`${"€".repeat(20_000)}\nnext\n`);
    expect(r.content).toBe("");
    expect(r.firstLineExceedsLimit).toBe(true);
    expect(r.truncatedBy).toBe("bytes");
    expect(r.outputLines).toBe(0);
    expect(r.outputBytes).toBe(0);
  });

  it("keeps CRLF bytes as they are", () => {
    const input = "a\r\nb\nc\r\n".repeat(1000); // 3000 lines
    const r = truncateHead(input);
    expect(r.outputLines).toBe(2000);
    expect(r.content.startsWith("a\r\nb\nc\r\na\r\n")).toBe(true);
    expect(r.content.endsWith("b")).toBe(true); // line 2000 is "b" (2000 = 3 * 666 + 2)
  });

  it("works on Buffers and never splits a character", () => {
    const r = truncateHead(Buffer.from(`${"€\n".repeat(30_000)}`));
    expect(r.outputLines).toBe(2000);
    expect(r.content).not.toContain("\uFFFD");
  });
});

describe("truncateTail", () => {
  it("returns empty input unchanged", () => {
    const r = truncateTail("");
    expect([r.content, r.truncated, r.totalLines, r.outputBytes]).toEqual(["", false, 0, 0]);
  });

  it("seq 1 3000 keeps lines 1001-3000 (with the final newline)", () => {
    const r = truncateTail(numbered(3000));
    expect(r.truncatedBy).toBe("lines");
    expect(r.totalLines).toBe(3000);
    expect(r.outputLines).toBe(2000);
    expect(r.content).toBe(numbered(3000).slice(numbered(1000).length));
    expect(r.content.startsWith("1001\n")).toBe(true);
    expect(r.content.endsWith("3000\n")).toBe(true);
  });

  it("keeps exactly 2000 lines, cuts 2001 to the last 2000", () => {
    expect(truncateTail(numbered(2000)).truncated).toBe(false);
    const r = truncateTail(numbered(2001));
    expect(r.outputLines).toBe(2000);
    expect(r.content.startsWith("2\n")).toBe(true);
  });

  it("cuts by bytes at whole lines: 51,200 fits, 51,201 does not", () => {
    const line = `${"x".repeat(99)}\n`;
    expect(truncateTail(line.repeat(512)).truncated).toBe(false);
    const r = truncateTail(`y\n${line.repeat(512)}`);
    expect(r.truncatedBy).toBe("bytes");
    expect(r.outputLines).toBe(512);
    expect(r.outputBytes).toBe(51_200);
    expect(r.totalLines).toBe(513);
    expect(r.totalBytes).toBe(51_202);
  });

  it("a 60,000-byte single line of '€' keeps its last whole characters (lastLinePartial)", () => {
    const input = "€".repeat(20_000); // 60,000 bytes
    const r = truncateTail(input);
    expect(r.lastLinePartial).toBe(true);
    expect(r.truncatedBy).toBe("bytes");
    expect(r.totalBytes).toBe(60_000);
    // 51,200 is not a multiple of 3: the cut moves forward to the next character start.
    expect(r.outputBytes).toBe(51_198);
    expect(r.content).toBe("€".repeat(17_066));
    expect(Buffer.from(r.content)[0]).toBe(0xe2);
    expect(r.content).not.toContain("\uFFFD");
  });

  it("a huge last line with a trailing newline still shows its end (Pi showed nothing)", () => {
    const r = truncateTail(`short\n${"z".repeat(60_000)}\n`);
    expect(r.lastLinePartial).toBe(true);
    expect(r.outputBytes).toBe(51_200);
    expect(r.content.endsWith("z\n")).toBe(true);
  });

  it("counts a CRLF mix by \\n only", () => {
    const r = truncateTail("a\r\nb\nc\r\n", { maxLines: 2 });
    expect(r.totalLines).toBe(3);
    expect(r.content).toBe("b\nc\r\n");
  });
});
