/**
 * cloneSharingStrings (src/util/clone.ts): the same copy as structuredClone for every kind of
 * value tool arguments can hold, without copying strings (its reason: issue 11, measured in
 * `npm run bench noisy-neighbour`; strings are immutable, so sharing them cannot be observed).
 */
import { describe, expect, it } from "vitest";
import { cloneSharingStrings } from "../../../src/util/index.js";

describe("cloneSharingStrings", () => {
  it("copies nested objects and arrays: changing the copy leaves the original as it was", () => {
    const original = { command: "true", edits: [{ oldText: "a", newText: "b" }], n: 1, ok: null };
    const copy = cloneSharingStrings(original);
    expect(copy).toEqual(original);
    copy.edits[0]!.oldText = "changed";
    copy.edits.push({ oldText: "x", newText: "y" });
    (copy as Record<string, unknown>).n = "1";
    expect(original).toEqual({ command: "true", edits: [{ oldText: "a", newText: "b" }], n: 1, ok: null });
    expect(copy.edits).not.toBe(original.edits);
  });

  it("keeps a __proto__ key as an own key and the prototype plain, as structuredClone does", () => {
    const original = JSON.parse('{"__proto__": {"command": "rm -rf /"}, "path": "x"}') as object;
    const copy = cloneSharingStrings(original);
    expect(Object.keys(copy)).toEqual(["__proto__", "path"]);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect((copy as { command?: string }).command).toBeUndefined();
    expect(copy).toEqual(structuredClone(original));
  });

  it("gives what structuredClone gives for Dates, Maps, typed arrays, holes, cycles and deep nesting", () => {
    const cyclic: Record<string, unknown> = { a: "x" };
    cyclic.self = cyclic;
    const sparse = [1, 2, 3];
    delete sparse[1]; // a hole
    let deep: unknown = "leaf";
    for (let i = 0; i < 600; i++) deep = [deep];
    const values: unknown[] = [
      new Date(0),
      new Map([["k", "v"]]),
      new Uint8Array([1, 2]),
      sparse,
      cyclic,
      deep,
      10n,
    ];
    for (const value of values) {
      const copy = cloneSharingStrings({ value });
      expect(copy).toEqual(structuredClone({ value }));
      if (typeof value === "object") expect(copy.value).not.toBe(value);
    }
    const copy = cloneSharingStrings(cyclic);
    expect(copy.self).toBe(copy);
  });

  it("throws DataCloneError for a function or a symbol, as structuredClone does", () => {
    expect(() => cloneSharingStrings({ f: () => 1 })).toThrow(
      expect.objectContaining({ name: "DataCloneError" }),
    );
    expect(() => cloneSharingStrings([Symbol("s")])).toThrow(
      expect.objectContaining({ name: "DataCloneError" }),
    );
  });
});
