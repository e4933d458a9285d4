/**
 * ls's order (Pi's: names compared lower-cased with localeCompare) without stalling the event loop:
 * ICU collation of a directory of hundreds of thousands of names takes seconds (500,000 names of
 * 40 non-ASCII characters: 4 to 7 s), during which a server answers no other tenant. Listings up to
 * LS_INLINE_SORT_ENTRIES are sorted inline; larger ones in a small bounded worker pool
 * (src/util/worker-pool.ts), in the same order.
 */
import { WardenError } from "../errors.js";
import { isAbortError, lazySharedPool } from "../util/index.js";

/** Listings of at most this many entries are sorted on the calling thread. */
export const LS_INLINE_SORT_ENTRIES = 20_000;

/** A large listing could not be sorted: the sort pool is full, or its worker ran out of memory. */
export class ListingSortError extends WardenError {
  constructor(entries: number, why: string) {
    super(
      "RATE_LIMITED",
      `Cannot list a directory of ${entries} entries now (${why}). Retry later, or use bash (e.g. 'ls -f DIR | head').`,
    );
  }
}

// Sorts the names it gets; answers the original indices in sorted order (stable, as Array#sort).
const WORKER_SOURCE = `
const { parentPort } = require("node:worker_threads");
parentPort.on("message", (names) => {
  try {
    const keys = names.map((name, i) => [name.toLowerCase(), i]);
    keys.sort((a, b) => a[0].localeCompare(b[0]));
    parentPort.postMessage({ ok: true, value: Int32Array.from(keys, (k) => k[1]) });
  } catch (err) {
    parentPort.postMessage({ ok: false, message: String((err && err.message) || err) });
  }
});
`;

/** The process-wide sort pool (lazySharedPool), 16 queued jobs. */
const sortPool = lazySharedPool<string[], Int32Array>(WORKER_SOURCE, 16);

/** Pi's comparison of two ls names. */
export function compareListingNames(a: string, b: string): number {
  return a.toLowerCase().localeCompare(b.toLowerCase());
}

/**
 * `entries` sorted by name in Pi's ls order (a new array for large listings; sorted in place for
 * small ones). Rejects AbortError when `signal` fires, ListingSortError when a large listing cannot
 * be sorted (pool full, worker out of memory).
 */
export async function sortListing<T extends { name: string }>(
  entries: T[],
  signal?: AbortSignal,
): Promise<T[]> {
  if (entries.length <= LS_INLINE_SORT_ENTRIES)
    return entries.sort((a, b) => compareListingNames(a.name, b.name));
  try {
    const order = await sortPool().run(
      entries.map((e) => e.name),
      { signal },
    );
    return Array.from(order, (i) => entries[i]!);
  } catch (err) {
    if (isAbortError(err)) throw err;
    throw new ListingSortError(entries.length, err instanceof Error ? err.message : String(err));
  }
}
