/**
 * A deep copy that shares strings. `structuredClone` copies every string it meets, which for tool
 * arguments is nearly all of their bytes: 0.86 ms of the event loop for the longest bash command a
 * 1 MiB body allows (issue 11). Strings are immutable, so a copy made for code that changes
 * objects and arrays in place (typebox's `Value.Convert`) need not copy them.
 */
import { types } from "node:util";

/** Nesting deeper than this is left to structuredClone (the copy here recurses). */
const MAX_DEPTH = 512;

/** Thrown inside the copy when structuredClone should make it instead. */
const USE_STRUCTURED_CLONE = Symbol("use structuredClone");

/**
 * Objects with internal slots that structuredClone copies (or refuses) by kind, even when their
 * prototype was changed to Object.prototype: never copied here as plain records.
 */
function isExotic(value: object): boolean {
  return (
    types.isProxy(value) ||
    types.isArgumentsObject(value) ||
    types.isBoxedPrimitive(value) ||
    types.isDate(value) ||
    types.isRegExp(value) ||
    types.isNativeError(value) ||
    types.isMap(value) ||
    types.isSet(value) ||
    types.isWeakMap(value) ||
    types.isWeakSet(value) ||
    types.isPromise(value) ||
    types.isAnyArrayBuffer(value) ||
    types.isArrayBufferView(value) ||
    types.isGeneratorObject(value) ||
    types.isModuleNamespaceObject(value)
  );
}

/** The value of own property `key` of `value`, refusing an accessor (structuredClone calls it once). */
function dataValue(value: object, key: string): unknown {
  const descriptor = Object.getOwnPropertyDescriptor(value, key);
  if (descriptor === undefined || !("value" in descriptor)) throw USE_STRUCTURED_CLONE;
  return descriptor.value;
}

/** `copies` maps each object already copied to its copy: shared parts stay shared, cycles stay cycles. */
function copy(value: unknown, depth: number, copies: Map<object, unknown>): unknown {
  if (typeof value === "function" || typeof value === "symbol") throw USE_STRUCTURED_CLONE;
  if (typeof value !== "object" || value === null) return value;
  const done = copies.get(value);
  if (done !== undefined) return done;
  if (depth > MAX_DEPTH || isExotic(value)) throw USE_STRUCTURED_CLONE;
  const proto = Object.getPrototypeOf(value);
  const keys = Object.keys(value);
  if (Array.isArray(value)) {
    // Only a plain array of enumerable data elements, no holes and no other keys.
    if (proto !== Array.prototype || keys.length !== value.length) throw USE_STRUCTURED_CLONE;
    const out: unknown[] = new Array(value.length);
    copies.set(value, out);
    for (let i = 0; i < keys.length; i++) out[i] = copy(dataValue(value, String(i)), depth + 1, copies);
    return out;
  }
  if (proto !== Object.prototype) throw USE_STRUCTURED_CLONE; // a class instance, a null prototype
  const out: Record<string, unknown> = {};
  copies.set(value, out);
  for (const key of keys) {
    // defineProperty, not assignment: a "__proto__" key stays an own key, as structuredClone keeps it.
    Object.defineProperty(out, key, {
      value: copy(dataValue(value, key), depth + 1, copies),
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
  return out;
}

/**
 * A deep copy of `value` equal to `structuredClone(value)` but sharing its strings. Plain objects
 * and plain arrays of data properties are copied here, shared parts and cycles kept as they are;
 * a value with anything else in it (a Date, Map, typed array, proxy, class instance, null-prototype
 * object, sparse array, array with extra keys, accessor property, or nesting over 512 levels) is
 * copied by structuredClone whole, and throws what it throws (DataCloneError for a function or a
 * symbol). Reads no accessor before that fallback, so none runs twice.
 */
export function cloneSharingStrings<T>(value: T): T {
  try {
    return copy(value, 0, new Map()) as T;
  } catch (err) {
    if (err !== USE_STRUCTURED_CLONE) throw err;
    return structuredClone(value);
  }
}
