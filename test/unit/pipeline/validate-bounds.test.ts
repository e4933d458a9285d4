/**
 * Issue 37, item 2: a validation error's text is bounded whatever the arguments. Pi's echo of the
 * received arguments, pretty-printed and never cut, made a 600 KB call's answer 37 MB and a 24 KB
 * one nested 12,000 deep 32 MB (its size grows with the square of the depth); warden's error is
 * Pi's text up to MAX_ECHO_CHARS characters and MAX_ECHO_DEPTH levels of echo and MAX_ERROR_LINES
 * lines, and names the bound it cut at.
 */
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import {
  formatValidationError,
  MAX_ECHO_CHARS,
  MAX_ECHO_DEPTH,
  MAX_ERROR_LINE_CHARS,
  MAX_ERROR_LINES,
  validateToolArguments,
} from "../../../src/pipeline/index.js";
import { echoTool } from "../../helpers/pipeline-fakes.js";

const NOTICE = "[Received arguments cut: at most 2048 characters and 8 levels of nesting are echoed]";
const HEAD = 'Validation failed for tool "echo":\n  - text: must be string\n\nReceived arguments:\n';

/** Arrays nested `depth` deep around `inner`. */
function nested(depth: number, inner: unknown[]): unknown {
  let v: unknown = inner;
  for (let k = 1; k < depth; k++) v = [v];
  return v;
}

describe("validation errors are bounded (issue 37, item 2)", () => {
  it("the bounds are 2048 characters, 8 levels, 20 lines of 256 characters", () => {
    expect([MAX_ECHO_CHARS, MAX_ECHO_DEPTH, MAX_ERROR_LINES, MAX_ERROR_LINE_CHARS]).toEqual([
      2048, 8, 20, 256,
    ]);
  });

  it("a 600 KB call nested 60 deep (Pi's echo: 37 MB) answers 2,172 characters: Pi's first 2048 and the notice", () => {
    const args = { text: {}, pad: nested(60, Array(300_000).fill(0)) };
    expect(JSON.stringify(args).length).toBeGreaterThan(600_000);
    const outcome = validateToolArguments(echoTool(), args);
    if (outcome.ok) throw new Error("valid");
    const eight =
      '{\n  "text": {},\n  "pad": [\n    [\n      [\n        [\n          [\n            [\n              [\n                […]';
    const echo = `${eight}\n              ]\n            ]\n          ]\n        ]\n      ]\n    ]\n  ]\n}`;
    expect(outcome.message).toBe(`${HEAD}${echo}\n${NOTICE}`);
    expect(outcome.message.length).toBe(HEAD.length + echo.length + 1 + NOTICE.length);
  });

  it("a wide 600 KB call (300,000 numbers) echoes exactly Pi's first 2048 characters and the notice", () => {
    const args = { text: {}, pad: Array(300_000).fill(0) };
    const outcome = validateToolArguments(echoTool(), args);
    if (outcome.ok) throw new Error("valid");
    expect(outcome.message).toBe(`${HEAD}${JSON.stringify(args, null, 2).slice(0, 2048)}\n${NOTICE}`);
    expect(outcome.message.length).toBe(HEAD.length + 2048 + 1 + NOTICE.length);
    expect(outcome.message.length).toBe(2214);
  });

  it("arguments sent as a 600 KB string that is not JSON echo 2048 characters of it", () => {
    const outcome = validateToolArguments(echoTool(), `{${"x".repeat(600_000)}`);
    if (outcome.ok) throw new Error("valid");
    expect(outcome.message.endsWith(`\n\nReceived arguments:\n"{${"x".repeat(2046)}\n${NOTICE}`)).toBe(true);
    expect(outcome.message.length).toBeLessThan(2600);
  });

  it("lists at most 20 error lines, each at most 256 characters, and says how many more there were", () => {
    const lines = Array.from(
      { length: 1000 },
      (_, k) => `  - items.${k}.${"k".repeat(k === 0 ? 1000 : 1)}: must be string`,
    );
    const text = formatValidationError("edit", lines, {});
    const shown = text.split("\n").slice(1, 22);
    expect(shown[0]).toBe(`  - items.0.${"k".repeat(256 - 12 - 1)}…`);
    expect(shown[0]?.length).toBe(256);
    expect(shown.slice(1, 20)).toEqual(lines.slice(1, 20));
    expect(shown[20]).toBe("  - (980 more errors: at most 20 are listed)");
    expect(text.split("\n")[22]).toBe("");
  });

  it("within the bounds the text is Pi's, with no notice", () => {
    const outcome = validateToolArguments(echoTool(), { text: {}, pad: nested(7, [0]) });
    if (outcome.ok) throw new Error("valid");
    expect(outcome.message).toBe(`${HEAD}${JSON.stringify({ text: {}, pad: nested(7, [0]) }, null, 2)}`);
  });
});

describe("an array of many bad entries", () => {
  it("lists TypeBox's errors, which stop at the first 8 (the 20-line bound is a second guard)", () => {
    const tool = echoTool({ parameters: Type.Object({ items: Type.Array(Type.String()) }) });
    const outcome = validateToolArguments(tool, { items: Array(10_000).fill({}) });
    if (outcome.ok) throw new Error("valid");
    expect(outcome.message.split("\n").slice(1, 10)).toEqual([
      ...Array.from({ length: 8 }, (_, k) => `  - items.${k}: must be string`),
      "",
    ]);
  });
});
