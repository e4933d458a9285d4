/**
 * cloneSharingStrings (src/util/clone.ts): the same copy as structuredClone for every kind of
 * value tool arguments can hold, without copying strings (its reason: issue 11, measured in
 * `npm run bench noisy-neighbour`; strings are immutable, so sharing them cannot be observed).
 * The odd inputs are a review's: each differed from structuredClone in the first version.
 */
import { describe, expect, it } from "vitest";
import { cloneSharingStrings } from "../../../src/util/index.js";

/** Asserts the copy equals structuredClone's (toStrictEqual: prototypes, holes, undefined keys). */
function sameAsStructuredClone(value: unknown): void {
  expect(cloneSharingStrings(value)).toStrictEqual(structuredClone(value));
}

describe("cloneSharingStrings", () => {
  it("copies nested objects and arrays: changing the copy leaves the original as it was", () => {
    const original = { command: "true", edits: [{ oldText: "a", newText: "b" }], n: 1, ok: null };
    const copy = cloneSharingStrings(original);
    expect(copy).toStrictEqual(original);
    copy.edits[0]!.oldText = "changed";
    copy.edits.push({ oldText: "x", newText: "y" });
    (copy as Record<string, unknown>).n = "1";
    expect(original).toStrictEqual({
      command: "true",
      edits: [{ oldText: "a", newText: "b" }],
      n: 1,
      ok: null,
    });
    expect(copy.edits).not.toBe(original.edits);
  });

  it("keeps a __proto__ key as an own key and the prototype plain, as structuredClone does", () => {
    const original = JSON.parse('{"__proto__": {"command": "rm -rf /"}, "path": "x"}') as object;
    const copy = cloneSharingStrings(original);
    expect(Object.keys(copy)).toEqual(["__proto__", "path"]);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect((copy as { command?: string }).command).toBeUndefined();
    sameAsStructuredClone(original);
  });

  it("keeps shared parts shared and cycles cyclic, in time linear in the objects (not the paths)", () => {
    const shared = { a: 1 };
    const twice = cloneSharingStrings({ p: shared, q: shared });
    expect(twice.p).toBe(twice.q);
    const cyclic: Record<string, unknown> = { a: "x" };
    cyclic.self = cyclic;
    const copy = cloneSharingStrings(cyclic);
    expect(copy.self).toBe(copy);
    expect(copy).not.toBe(cyclic);
    // 2^40 paths through 41 objects: copying per path never ended (the review's input at n=40).
    let dag: object = { s: "x" };
    for (let i = 0; i < 40; i++) dag = { a: dag, b: dag };
    const big = cloneSharingStrings(dag) as { a: object; b: object };
    expect(big.a).toBe(big.b);
  });

  it("gives what structuredClone gives for built-ins, disguised ones, proxies, odd arrays and deep nesting", () => {
    const sparse = [1, 2, 3];
    delete sparse[1];
    const extraKey = Object.assign([1, 2], { foo: "x" });
    const hiddenIndex = [1, 2, 3];
    Object.defineProperty(hiddenIndex, 1, { value: 9, enumerable: false });
    let deep: unknown = "leaf";
    for (let i = 0; i < 600; i++) deep = [deep];
    const values: unknown[] = [
      new Date(0),
      new Map([["k", "v"]]),
      new Uint8Array([1, 2]),
      10n,
      sparse,
      extraKey,
      hiddenIndex,
      deep,
      Object.setPrototypeOf([1, "a"], null),
      Object.setPrototypeOf({ a: 1 }, null),
      Object.setPrototypeOf(new Date(0), Object.prototype),
      Object.setPrototypeOf(new Map([[1, 2]]), null),
      Object.setPrototypeOf(new Error("boom"), Object.prototype),
      Object.setPrototypeOf(new String("ab"), Object.prototype),
      Object.setPrototypeOf(new Uint8Array([1]), null),
    ];
    for (const value of values) sameAsStructuredClone({ value });
  });

  it("runs an accessor once and leaves a key a getter deleted out, as structuredClone does", () => {
    let reads = 0;
    const counted = {
      get a() {
        reads++;
        return 1;
      },
      f: new Date(0),
    };
    cloneSharingStrings(counted);
    expect(reads).toBe(1);
    const deleting = {
      get a() {
        delete (this as { b?: number }).b;
        return 1;
      },
      b: 2,
    };
    expect(Object.keys(cloneSharingStrings(deleting))).toEqual(["a"]);
  });

  it("throws DataCloneError where structuredClone does: a function, a symbol, a proxy, an arguments object", () => {
    const dataCloneError = expect.objectContaining({ name: "DataCloneError" });
    expect(() => cloneSharingStrings({ f: () => 1 })).toThrow(dataCloneError);
    expect(() => cloneSharingStrings([Symbol("s")])).toThrow(dataCloneError);
    expect(() => cloneSharingStrings({ p: new Proxy({ a: 1 }, {}) })).toThrow(dataCloneError);
    expect(() => cloneSharingStrings(new Proxy([1, 2], {}))).toThrow(dataCloneError);
    const args = (function (..._: unknown[]) {
      // biome-ignore lint/complexity/noArguments: the arguments object is the case under test
      return arguments;
    })(1, 2);
    expect(() => cloneSharingStrings(args)).toThrow(dataCloneError);
  });
});
