import { describe, expect, it } from "vitest";
import { jsonParseReason } from "../../../src/util/index.js";

/** What JSON.parse throws for `text` (every case here is invalid JSON). */
function thrown(text: string): unknown {
  try {
    JSON.parse(text);
  } catch (err) {
    return err;
  }
  throw new Error(`${JSON.stringify(text)} parsed`);
}

describe("jsonParseReason", () => {
  it("words a refused text the same on every supported Node: the position, no line and column", () => {
    expect(jsonParseReason(thrown("{oo"))).toBe("Expected property name or '}' in JSON at position 1");
    expect(jsonParseReason(thrown('{"a":1}x'))).toBe(
      "Unexpected non-whitespace character after JSON at position 7",
    );
    expect(jsonParseReason(thrown('"abc'))).toBe("Unterminated string in JSON at position 4");
  });

  it("keeps a reason without a position as V8 gives it", () => {
    expect(jsonParseReason(thrown(""))).toBe("Unexpected end of JSON input");
  });

  it("turns a throw that is not an Error into its string", () => {
    expect(jsonParseReason("boom")).toBe("boom");
  });
});
