import { describe, expect, it } from "vitest";
import { LineRangeCollector } from "../../../src/truncate/line-range.js";

function collect(input: string, range: { startLine: number; maxLines: number; maxBytes: number }, chunk = 3) {
  const c = new LineRangeCollector(range);
  const buf = Buffer.from(input);
  for (let i = 0; i < buf.length; i += chunk) c.push(buf.subarray(i, i + chunk));
  const r = c.finish();
  return { data: r.data.toString(), totalLines: r.totalLines };
}

describe("LineRangeCollector", () => {
  it("selects lines with their newlines and counts all lines", () => {
    expect(collect("a\nbb\nccc\ndddd\n", { startLine: 2, maxLines: 2, maxBytes: 100 })).toEqual({
      data: "bb\nccc\n",
      totalLines: 4,
    });
  });

  it("counts an unterminated last line; an empty stream has 0 lines", () => {
    expect(collect("a\nb", { startLine: 2, maxLines: 5, maxBytes: 100 })).toEqual({
      data: "b",
      totalLines: 2,
    });
    expect(collect("", { startLine: 1, maxLines: 5, maxBytes: 100 })).toEqual({ data: "", totalLines: 0 });
  });

  it("caps the selection at maxBytes (possibly inside a line)", () => {
    expect(collect("abcdef\nghi\n", { startLine: 1, maxLines: 5, maxBytes: 4 }).data).toBe("abcd");
  });

  it("a start past the end selects nothing", () => {
    expect(collect("a\nb\n", { startLine: 3, maxLines: 1, maxBytes: 10 })).toEqual({
      data: "",
      totalLines: 2,
    });
  });
});
