/**
 * Option bags without the keys whose value is `undefined`, for `exactOptionalPropertyTypes`: an
 * optional field `signal?: AbortSignal` may be left out but not set to `undefined`, while a caller
 * that forwards its own optional value (`{ signal }` with `signal: AbortSignal | undefined`) would
 * set it. `omitUndefined({ signal })` leaves the key out when there is nothing to pass, which is
 * what every callee reads it as (`options.signal` is `undefined` either way).
 */

/** The keys of `T` whose value type admits `undefined`. */
type UndefinedKeys<T> = { [K in keyof T]-?: undefined extends T[K] ? K : never }[keyof T];

/**
 * `T` with every key whose value may be `undefined` made optional and its `undefined` dropped
 * (`{ a: string; b: number | undefined }` → `{ a: string; b?: number }`).
 */
export type OmitUndefined<T> = { [K in Exclude<keyof T, UndefinedKeys<T>>]: T[K] } & {
  [K in UndefinedKeys<T>]?: Exclude<T[K], undefined>;
};

/**
 * A shallow copy of `fields` (own enumerable string keys, as a plain object) without the keys
 * whose value is `undefined`; `null`, `0`, `""` and `false` stay. `fields` is not changed.
 *
 * @example sandbox.stat(path, omitUndefined({ signal })) // `{}` when signal is undefined
 */
export function omitUndefined<T extends object>(fields: T): OmitUndefined<T>;
// The overload states the result's type, which TypeScript cannot derive from the filtering below;
// test/unit/util/omit-undefined.test.ts checks that the two agree.
export function omitUndefined(fields: object): object {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
}
