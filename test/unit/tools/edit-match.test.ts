import { describe, expect, it } from "vitest";
import {
  applyEdits,
  countOccurrences,
  detectLineEnding,
  indentationHint,
  MAX_FUZZY_MATCH_CHARS,
} from "../../../src/tools/edit-match.js";
import { normalizeForFuzzyMatch, toLf } from "../../../src/tools/edit-normalize.js";

function apply(text: string, ...edits: [string, string][]) {
  return applyEdits(
    text,
    edits.map(([oldText, newText]) => ({ oldText, newText })),
  );
}

function ok(text: string, ...edits: [string, string][]): string {
  const r = apply(text, ...edits);
  if (!r.ok) throw new Error(`expected success, got ${JSON.stringify(r.failure)}`);
  return r.text;
}

describe("detectLineEnding", () => {
  it("takes the first newline's ending", () => {
    expect(detectLineEnding("a\r\nb\nc")).toBe("\r\n");
    expect(detectLineEnding("a\nb\r\nc")).toBe("\n");
    expect(detectLineEnding("a\rb")).toBe("\n");
    expect(detectLineEnding("abc")).toBe("\n");
  });
});

describe("toLf", () => {
  it("maps normalised offsets back to the original", () => {
    const lf = toLf("a\r\nb\rc");
    expect(lf.text).toBe("a\nb\nc");
    expect([0, 1, 2, 3, 4, 5].map((i) => lf.rawStart(i))).toEqual([0, 1, 3, 4, 5, 6]);
  });
});

describe("normalizeForFuzzyMatch", () => {
  it("keeps an ASCII letter and the combining mark after it one cluster (NFKC composes them)", () => {
    const f = normalizeForFuzzyMatch("cafe\u0301 \u2018x\u2019");
    expect(f.text).toBe("caf\u00E9 'x'");
    expect([f.start[3], f.end[3]]).toEqual([3, 5]);
  });

  it("applies NFKC, quotes, dashes, special spaces and trailing-whitespace rules", () => {
    const input = "\u201Chi\u201D \u2018x\u2019 a\u2014b\u2212c \uFB01 x\u00A0y  \t\nnext\u3000";
    expect(normalizeForFuzzyMatch(input).text).toBe("\"hi\" 'x' a-b-c fi x y\nnext");
  });

  it("keeps a combining sequence together and maps every unit to its source span", () => {
    const f = normalizeForFuzzyMatch("e\u0301x");
    expect(f.text).toBe("\u00E9x");
    expect(f.start).toEqual([0, 2]);
    expect(f.end).toEqual([2, 3]);
  });
});

describe("applyEdits", () => {
  it("case 9: CRLF file, LF oldText -> exactly ALPHA\\r\\nBETA\\r\\ngamma\\r\\n", () => {
    expect(ok("alpha\r\nbeta\r\ngamma\r\n", ["alpha\nbeta", "ALPHA\nBETA"])).toBe(
      "ALPHA\r\nBETA\r\ngamma\r\n",
    );
  });

  it("case 9: in a mixed-EOL file, untouched lines keep their own endings", () => {
    const text = "one\r\ntwo\nthree\r\nfour\n";
    expect(ok(text, ["three", "THREE"])).toBe("one\r\ntwo\nTHREE\r\nfour\n");
    // New lines inside newText take the file's ending (from its first newline).
    expect(ok(text, ["two\n", "two\nhalf\n"])).toBe("one\r\ntwo\r\nhalf\r\nthree\r\nfour\n");
  });

  it("case 10: a BOM is kept and an oldText without it matches at offset 0", () => {
    const r = apply("\uFEFFhello\nw\u00F6rld\n", ["hello\nw", "hello2\nw"]);
    expect(r.ok && r.text).toBe("\uFEFFhello2\nw\u00F6rld\n");
    expect(r.ok && Buffer.from(r.text, "utf8")).toEqual(
      Buffer.from([0xef, 0xbb, 0xbf, ...Buffer.from("hello2\nw\u00F6rld\n", "utf8")]),
    );
    expect(r.ok && r.bom).toBe(true);
    expect(r.ok && r.oldLf).toBe("hello\nw\u00F6rld\n");
  });

  it("case 12: a tab edit succeeds, a spaces edit fails with the tabs hint and writes nothing", () => {
    const file = "f() {\n\treturn 1\n}\n";
    expect(ok(file, ["\treturn 1", "\treturn 2"])).toBe("f() {\n\treturn 2\n}\n");
    expect(apply(file, ["    return 1", "    return 2"])).toEqual({
      ok: false,
      failure: { kind: "not-found", index: 0, hint: { kind: "file-uses-tabs", line: 2 } },
    });
  });

  it("hints the reverse case and plain indentation differences", () => {
    expect(indentationHint("a\n    b\nc", "\tb")).toEqual({ kind: "file-uses-spaces", line: 2 });
    expect(indentationHint("a\n    b\n    c\n", "a\n  b\n  c")).toEqual({ kind: "indentation", line: 2 });
    expect(indentationHint("a\nb\n", "zzz")).toBeNull();
  });

  it("tries only exact matches in a file over MAX_FUZZY_MATCH_CHARS, and says so", () => {
    const file = `${"a".repeat(MAX_FUZZY_MATCH_CHARS)}\nsay(\u201Chi\u201D)\n`;
    expect(apply(file, ['say("hi")', "x"])).toEqual({
      ok: false,
      failure: {
        kind: "not-found",
        index: 0,
        hint: { kind: "exact-only", limitChars: MAX_FUZZY_MATCH_CHARS },
      },
    });
    expect(apply(file.slice(MAX_FUZZY_MATCH_CHARS - 10), ['say("hi")', "x"])).toMatchObject({ ok: true });
  });

  it("finds the hint past thousands of near matches (middle lines matched in linear time)", () => {
    // Every start is a near match for 11,999 lines; the old search re-compared them at each start.
    const file = `${"x\n".repeat(24_000)}\ty\n`;
    const want = `${"x\n".repeat(11_999)}    y`;
    expect(indentationHint(file, want)).toEqual({ kind: "file-uses-tabs", line: 24_001 });
    expect(indentationHint(file, `${"x\n".repeat(11_999)}z`)).toBeNull();
  });

  it("matches fuzzily on oldText only and writes newText byte for byte", () => {
    const file = "say(\u201Chello\u201D) \u2014 ok   \nnext\n";
    const r = apply(file, ['say("hello") - ok', "say(\u201Cbye\u201D)"]);
    expect(r).toMatchObject({ ok: true, matches: [{ index: 0, start: 0, end: 17, fuzzy: true }] });
    // The file's trailing blanks after the matched span stay; nothing outside the span is normalised.
    expect(r.ok && r.text).toBe("say(\u201Cbye\u201D)   \nnext\n");
  });

  it("fuzzy matching spans trailing whitespace inside the matched lines", () => {
    expect(ok("a  \nb\nc\n", ["a\nb", "A\nB"])).toBe("A\nB\nc\n");
  });

  it("fuzzy matching does not rewrite curly quotes elsewhere in the file", () => {
    expect(ok("\u201Cx\u201D\nfoo\u00A0bar\n", ["foo bar", "baz"])).toBe("\u201Cx\u201D\nbaz\n");
  });

  it("counts duplicates and reports the count", () => {
    expect(apply("x\nx\nx\n", ["x", "y"])).toEqual({
      ok: false,
      failure: { kind: "ambiguous", index: 0, count: 3 },
    });
    expect(apply("\u201Cq\u201D \u201Cq\u201D", ['"q"', "r"])).toEqual({
      ok: false,
      failure: { kind: "ambiguous", index: 0, count: 2 },
    });
  });

  it("matches every edit against the original text", () => {
    expect(ok("a b c", ["a", "b"], ["b", "a"])).toBe("b a c");
  });

  it("refuses overlapping edits naming both", () => {
    expect(apply("abcdef", ["abc", "x"], ["cde", "y"])).toEqual({
      ok: false,
      failure: { kind: "overlap", first: 0, second: 1 },
    });
    expect(apply("abcdef", ["def", "x"], ["abcd", "y"])).toEqual({
      ok: false,
      failure: { kind: "overlap", first: 0, second: 1 },
    });
  });

  it("refuses an empty oldText, a not-found oldText, and an identical result", () => {
    expect(apply("abc", ["b", "B"], ["", "x"])).toEqual({
      ok: false,
      failure: { kind: "empty-old-text", index: 1 },
    });
    expect(apply("abc", ["zz", "x"])).toEqual({
      ok: false,
      failure: { kind: "not-found", index: 0, hint: null },
    });
    expect(apply("abc", ["b", "b"])).toEqual({ ok: false, failure: { kind: "no-change" } });
  });

  it("treats $ patterns in newText literally", () => {
    expect(ok("price", ["price", "$& $1 $$"])).toBe("$& $1 $$");
  });
});

describe("countOccurrences", () => {
  it("counts non-overlapping occurrences", () => {
    expect(countOccurrences("aaaa", "aa")).toBe(2);
    expect(countOccurrences("abc", "")).toBe(0);
  });
});
