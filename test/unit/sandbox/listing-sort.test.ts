/**
 * A listing is parsed, sorted in ls order and cut where the caller shows it (listing.ts), in the
 * worker pool when large (listing-sort.ts): the event loop gets the shown head and a summary of
 * the rest, never the other names, and the same entries as sorting the whole listing here.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { compareListingNames, parseListing, sortedListingOf } from "../../../src/sandbox/listing.js";
import { LISTING_INLINE_MAX_BYTES, listingPool, sortListing } from "../../../src/sandbox/listing-sort.js";
import type { DirEntry, ListingView } from "../../../src/sandbox/types.js";

afterEach(() => vi.restoreAllMocks());

const TYPES: DirEntry["type"][] = ["file", "directory", "symlink", "other"];
// Names in a scrambled order, mixed case, non-ASCII, equal lower-cased names, and newlines.
const entriesOf = (n: number): DirEntry[] =>
  Array.from({ length: n }, (_, i) => {
    const k = (i * 7919) % n;
    const name = `${k % 3 === 0 ? "Ä" : k % 3 === 1 ? "a" : "B"}${k}${k % 11 === 0 ? "\nx" : ""}`;
    return { name: k % 5 === 0 ? name.toUpperCase() : name, type: TYPES[k % 4]! };
  });
const LETTERS = { file: "f", directory: "d", symlink: "l", other: "p" };
const json = (entries: DirEntry[]) => ({
  format: "json" as const,
  bytes: Buffer.from(JSON.stringify(entries)),
});
const find = (entries: DirEntry[]) => ({
  format: "find" as const,
  bytes: Buffer.from(entries.map((e) => `${LETTERS[e.type]}${e.name}\0`).join("")),
});

/** What the whole listing sorted here (the old path: Array#sort, stable) shows for `view`. */
function wholeSorted(entries: DirEntry[], view: ListingView) {
  const sorted = [...entries].sort((a, b) => compareListingNames(a.name, b.name));
  const shown = sorted.slice(0, view.first);
  let bytes = -1;
  let cut = 0;
  while (cut < shown.length && bytes < view.headBytes + 2) bytes += Buffer.byteLength(shown[cut++]!.name) + 1;
  const rest = shown.slice(cut);
  return {
    total: entries.length,
    head: shown.slice(0, cut),
    rest: {
      count: rest.length,
      nameBytes: rest.reduce((n, e) => n + Buffer.byteLength(e.name), 0),
      nameNewlines: rest.reduce((n, e) => n + e.name.split("\n").length - 1, 0),
      directories: rest.filter((e) => e.type === "directory").length,
      symlinks: rest.filter((e) => e.type === "symlink").slice(0, view.maxSymlinks),
      last: rest.at(-1) ?? null,
    },
  };
}

describe("sortListing", () => {
  it("sorts and cuts a 100,000-name listing in the worker pool; only the head comes back", async () => {
    const entries = entriesOf(100_000);
    const raw = json(entries);
    expect(raw.bytes.length).toBeGreaterThan(LISTING_INLINE_MAX_BYTES);
    const run = vi.spyOn(listingPool(), "run");
    const view = { first: 60_000, headBytes: 51_200, maxSymlinks: 16 };
    const listing = await sortListing(raw, view);
    expect(run).toHaveBeenCalledTimes(1);
    expect(run.mock.calls[0]?.[0]).toEqual({ raw, view });
    expect(listing).toEqual(wholeSorted(entries, view));
    expect(listing.total).toBe(100_000);
    expect(listing.head.length).toBeLessThan(8_000);
    expect(listing.rest.count).toBe(60_000 - listing.head.length);
  });

  it("sends a large listing to the worker process as a copy: the caller's buffer stays readable", async () => {
    const entries = entriesOf(20_000);
    const view = { first: 5, headBytes: 100, maxSymlinks: 1 };
    const expected = wholeSorted(entries, view);
    const text = JSON.stringify(entries);
    const shared = Buffer.concat([Buffer.from(text), Buffer.from("after")]);
    const first = shared.subarray(0, shared.length - 5);
    expect(first.length).toBeGreaterThan(LISTING_INLINE_MAX_BYTES);
    expect(await sortListing({ format: "json", bytes: first }, view)).toEqual(expected);
    expect(shared.toString()).toBe(`${text}after`);
  });

  it("hands a large listing whole to the pool and returns its answer as it is (nothing parsed here)", async () => {
    const answer = {
      total: 3,
      head: [{ name: "w", type: "file" as const }],
      rest: wholeSorted([], { first: 1, headBytes: 0, maxSymlinks: 0 }).rest,
    };
    const run = vi.spyOn(listingPool(), "run").mockResolvedValue(answer);
    const raw = { format: "json" as const, bytes: Buffer.alloc(LISTING_INLINE_MAX_BYTES + 1, 0x20) };
    expect(await sortListing(raw, { first: 1, headBytes: 10, maxSymlinks: 1 })).toBe(answer);
    expect(run).toHaveBeenCalledTimes(1);
  });

  it("gives the whole sort's entries for both formats, inline and in the pool, at every cut", async () => {
    for (const n of [0, 1, 7, 3_000, 30_000]) {
      const entries = entriesOf(n);
      for (const first of [1, 5, 500, n - 1, n, n + 1, 1_000_000].filter((f) => f >= 1)) {
        const view = { first, headBytes: 2_000, maxSymlinks: 16 };
        const expected = wholeSorted(entries, view);
        expect(await sortListing(json(entries), view), `json ${n} ${first}`).toEqual(expected);
        expect(await sortListing(find(entries), view), `find ${n} ${first}`).toEqual(expected);
      }
    }
  });

  it("parses the docker-exec path's find output as it did (a type letter, the name, a NUL)", () => {
    const raw = { format: "find" as const, bytes: Buffer.from("fa.txt\0dsub\0lln\0pfifo\0fnew\nline\0") };
    expect(parseListing(raw)).toEqual([
      { name: "a.txt", type: "file" },
      { name: "sub", type: "directory" },
      { name: "ln", type: "symlink" },
      { name: "fifo", type: "other" },
      { name: "new\nline", type: "file" },
    ]);
  });

  it("rejects a malformed listing with SandboxError, here and from the pool", async () => {
    const view = { first: 5, headBytes: 100, maxSymlinks: 1 };
    await expect(sortListing({ format: "json", bytes: Buffer.from("{") }, view)).rejects.toMatchObject({
      name: "SandboxError",
      message: expect.stringContaining("Malformed listDir frame from warden-helper"),
    });
    const big = Buffer.from(`{"not":"a list","pad":"${" ".repeat(LISTING_INLINE_MAX_BYTES)}"}`);
    await expect(sortListing({ format: "json", bytes: big }, view)).rejects.toMatchObject({
      message: "Malformed directory listing from warden-helper.",
    });
  });

  it("refuses a large listing with RATE_LIMITED when the pool cannot take it (never sorts it here)", async () => {
    vi.spyOn(listingPool(), "run").mockRejectedValue(
      new Error("worker pool queue is full (16 jobs waiting)"),
    );
    const raw = json(entriesOf(20_000));
    await expect(sortListing(raw, { first: 5, headBytes: 100, maxSymlinks: 1 })).rejects.toMatchObject({
      code: "RATE_LIMITED",
      message: `Cannot list a directory whose listing is ${raw.bytes.length} bytes now (worker pool queue is full (16 jobs waiting)). Retry later, or use bash (e.g. 'ls -f DIR | head').`,
    });
  });

  it("sortedListingOf leaves its input in listing order", () => {
    const entries = entriesOf(50);
    const copy = [...entries];
    sortedListingOf(entries, { first: 10, headBytes: 5, maxSymlinks: 2 });
    expect(entries).toEqual(copy);
  });
});
