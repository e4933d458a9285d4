/** omitUndefined (src/util/omit-undefined.ts): the keys set to undefined are left out, nothing else changes. */
import { describe, expect, expectTypeOf, it } from "vitest";
import { omitUndefined } from "../../../src/util/index.js";

/** `value` typed as possibly undefined, as a caller's optional option is. */
function optional<T>(value: T | undefined): T | undefined {
  return value;
}

describe("omitUndefined", () => {
  it("leaves out exactly the keys whose value is undefined, keeping null, 0, empty strings and false", () => {
    const signal = new AbortController().signal;
    const copy = omitUndefined({ a: undefined, b: null, c: 0, d: "", e: false, signal, f: undefined });
    expect(copy).toStrictEqual({ b: null, c: 0, d: "", e: false, signal });
    expect(Object.keys(copy)).toEqual(["b", "c", "d", "e", "signal"]);
    expect(copy.signal).toBe(signal);
  });

  it("gives an empty object when every value is undefined, and leaves its argument as it was", () => {
    const fields = { signal: optional<AbortSignal>(undefined), tenant: optional<string>(undefined) };
    expect(omitUndefined(fields)).toStrictEqual({});
    expect(Object.keys(fields)).toEqual(["signal", "tenant"]);
  });

  it("makes a possibly-undefined key optional without undefined, and keeps the other keys' types", () => {
    const copy = omitUndefined({ path: "/workspace", signal: optional<AbortSignal>(undefined) });
    expectTypeOf(copy.path).toEqualTypeOf<string>();
    expectTypeOf(copy.signal).toEqualTypeOf<AbortSignal | undefined>();
    // Under exactOptionalPropertyTypes the result fits a bag whose signal may be left out but not be undefined.
    const options: { path: string; signal?: AbortSignal } = copy;
    expect(options).toStrictEqual({ path: "/workspace" });
  });
});
