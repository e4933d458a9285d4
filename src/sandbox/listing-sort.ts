/**
 * A listing's name-ordered view (listing.ts) without holding the event loop: parsing, sorting and
 * cutting a listing of hundreds of thousands of names took the event loop about 0.8 s (400,000
 * names: JSON.parse alone ~250 ms, then ICU collation; issue 11), during which a server answered
 * no other tenant. Listings of up to LISTING_INLINE_MAX_BYTES are handled here; larger ones go whole,
 * as their bytes, to a small bounded worker pool (util/worker-pool.ts: processes at the lowest CPU priority), which
 * answers only the shown head and the summary of the rest, never the other names.
 */
import { SandboxError, WardenError } from "../errors.js";
import { isAbortError, lazySharedPool, throwIfAborted, workerModule } from "../util/index.js";
import { parseListing, type RawListing, sortedListingOf } from "./listing.js";
import type { DirEntry, ListingView, SortedListing } from "./types.js";

/** Listings of at most this many bytes (about 5,000 names) are parsed and sorted on the calling thread. */
export const LISTING_INLINE_MAX_BYTES = 256 * 1024;

/** A large listing could not be sorted now: the pool's queue is full, or its worker ran out of memory. */
class ListingSortError extends WardenError {
  constructor(bytes: number, why: string) {
    super(
      "RATE_LIMITED",
      `Cannot list a directory whose listing is ${bytes} bytes now (${why}). Retry later, or use bash (e.g. 'ls -f DIR | head').`,
    );
  }
}

/** One listing for the pool's worker (listing-worker.ts): its bytes and the view to cut. */
export interface ListingJob {
  raw: RawListing;
  view: ListingView;
}

/** The process-wide listing pool (lazySharedPool), 16 queued listings; exported for tests. */
export const listingPool = lazySharedPool<ListingJob, SortedListing | { malformed: string }>(
  workerModule(import.meta.url, "listing-worker"),
  16,
);

/**
 * The SortedListing of `raw` for `view` (a large `raw.bytes` is copied to the worker process).
 * Rejects SandboxError for a malformed
 * listing, AbortError when `signal` fires, ListingSortError when a large listing cannot be sorted
 * now (pool full, worker out of memory).
 */
export async function sortListing(
  raw: RawListing,
  view: ListingView,
  signal?: AbortSignal,
): Promise<SortedListing> {
  throwIfAborted(signal);
  let sorted: SortedListing | { malformed: string };
  if (raw.bytes.length <= LISTING_INLINE_MAX_BYTES) {
    const entries = parseListing(raw);
    sorted = Array.isArray(entries) ? sortedListingOf(entries, view) : entries;
  } else {
    const bytes = raw.bytes.length;
    try {
      sorted = await listingPool().run({ raw, view }, signal ? { signal } : {});
    } catch (err) {
      if (isAbortError(err)) throw err;
      throw new ListingSortError(bytes, err instanceof Error ? err.message : String(err));
    }
  }
  if ("malformed" in sorted) throw new SandboxError(sorted.malformed);
  return sorted;
}

/** The entries of `raw` in listing order (parsed here). Rejects SandboxError for a malformed listing. */
export function listingEntries(raw: RawListing): DirEntry[] {
  const entries = parseListing(raw);
  if (!Array.isArray(entries)) throw new SandboxError(entries.malformed);
  return entries;
}
