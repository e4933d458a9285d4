/** boundedJson: JSON.stringify's text within its bounds; past them cut in depth and size (issue 37, item 2). */
import { describe, expect, it } from "vitest";
import { boundedJson } from "../../../src/util/index.js";

const wide = { maxChars: 1_000_000, maxDepth: 1_000 };

describe("boundedJson", () => {
  it("is JSON.stringify(value, null, 2) exactly within its bounds", () => {
    const values: unknown[] = [
      { a: 1, b: [1, "two", null, true, { c: {} }], d: [], e: 'é\u2028"\\', f: -0, g: Number.NaN },
      [undefined, () => 1, Symbol("s")],
      { skipped: undefined, fn: () => 1, kept: 1 },
      { onlyUndefined: undefined },
      "text",
      42,
      null,
      { when: new Date(0) },
    ];
    for (const v of values)
      expect(boundedJson(v, wide)).toEqual({ text: JSON.stringify(v, null, 2), cut: false });
    expect(boundedJson(undefined, wide)).toEqual({ text: "undefined", cut: false });
  });

  it("shows maxDepth levels; a deeper non-empty value is […] or {…}, an empty one stays [] or {}", () => {
    expect(boundedJson({ a: [[1]], b: [[]], c: { d: { e: 1 } } }, { maxChars: 1000, maxDepth: 2 })).toEqual({
      text: '{\n  "a": [\n    […]\n  ],\n  "b": [\n    []\n  ],\n  "c": {\n    "d": {…}\n  }\n}',
      cut: true,
    });
  });

  it("stops at maxChars, and cuts a long string before escaping it", () => {
    const zeros = Array(300_000).fill(0);
    expect(boundedJson(zeros, { maxChars: 100, maxDepth: 8 })).toEqual({
      text: JSON.stringify(zeros, null, 2).slice(0, 100),
      cut: true,
    });
    const long = `${'"'.repeat(50)}${"x".repeat(1_000_000)}`;
    expect(boundedJson({ long }, { maxChars: 64, maxDepth: 8 })).toEqual({
      text: JSON.stringify({ long }, null, 2).slice(0, 64),
      cut: true,
    });
  });
});
