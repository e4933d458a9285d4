/**
 * The worker module of listing-sort.ts's pool (util/worker-pool.ts): a listing's bytes and view in,
 * its SortedListing (listing.ts: parsed, sorted and cut to the shown head) or why it is malformed out.
 */
import { parseListing, sortedListingOf } from "./listing.js";
import type { ListingJob } from "./listing-sort.js";
import type { SortedListing } from "./types.js";

/** The SortedListing of `job.raw` for `job.view`, or `{ malformed }`. */
export function runJob({ raw, view }: ListingJob): SortedListing | { malformed: string } {
  const entries = parseListing(raw);
  return Array.isArray(entries) ? sortedListingOf(entries, view) : entries;
}
