/**
 * A deep copy that shares strings. `structuredClone` copies every string it meets, which for tool
 * arguments is nearly all of their bytes: 0.86 ms of the event loop for the longest bash command a
 * 1 MiB body allows (issue 11). Strings are immutable, so a copy made for code that changes
 * objects and arrays in place (typebox's `Value.Convert`) need not copy them.
 */

/** Nesting deeper than this is left to structuredClone (a cycle reaches it too). */
const MAX_DEPTH = 512;

/** Thrown inside the copy when structuredClone should make it instead. */
const USE_STRUCTURED_CLONE = Symbol("use structuredClone");

function copy(value: unknown, depth: number): unknown {
  if (typeof value === "function" || typeof value === "symbol") throw USE_STRUCTURED_CLONE;
  if (typeof value !== "object" || value === null) return value;
  if (depth > MAX_DEPTH) throw USE_STRUCTURED_CLONE;
  const proto = Object.getPrototypeOf(value);
  if (Array.isArray(value) && proto === Array.prototype) {
    const out: unknown[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) {
      if (!(i in value)) throw USE_STRUCTURED_CLONE; // a hole, which structuredClone keeps
      out[i] = copy(value[i], depth + 1);
    }
    return out;
  }
  if (proto !== Object.prototype && proto !== null) throw USE_STRUCTURED_CLONE; // Date, Map, class …
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    // defineProperty, not assignment: a "__proto__" key stays an own key, as structuredClone keeps it.
    Object.defineProperty(out, key, {
      value: copy((value as Record<string, unknown>)[key], depth + 1),
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
  return out;
}

/**
 * A deep copy of `value` equal to `structuredClone(value)` but sharing its strings. Plain objects
 * and arrays of JSON-like values are copied here (own enumerable string keys, as structuredClone
 * copies them); a value with anything else in it (a Date, Map, typed array, class instance, sparse
 * array, a cycle or nesting over 512 levels) is copied by structuredClone whole, and throws what it
 * throws (DataCloneError for a function or a symbol).
 */
export function cloneSharingStrings<T>(value: T): T {
  try {
    return copy(value, 0) as T;
  } catch (err) {
    if (err !== USE_STRUCTURED_CLONE) throw err;
    return structuredClone(value);
  }
}
