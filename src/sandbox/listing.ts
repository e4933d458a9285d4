/**
 * Directory listings as the two I/O paths carry them, and their name-ordered view (pure; no I/O).
 * A listing arrives as one buffer: warden-helper's listDir frame (JSON `[{name, type}]`) or the
 * docker-exec path's `find -printf "%y%f\0"` output (a type letter, the name, a NUL). The ordered
 * view is the ls tool's (Pi's: names lower-cased and compared with localeCompare; equal names keep
 * their listing order, as Array#sort is stable) cut to the first entries, so a caller that shows
 * 500 of 400,000 names never holds the other names (listing-sort.ts runs it in a worker for large
 * listings, listing-worker.ts).
 */
import type { DirEntry, ListingRest, ListingView, SortedListing } from "./types.js";

/**
 * A listing's bytes as an I/O path answered them (see the module docstring).
 */
export interface RawListing {
  format: "json" | "find";
  bytes: Buffer;
}

/** The ls order of two names (Pi's ls: lower-cased, localeCompare). */
export function compareListingNames(a: string, b: string): number {
  return a.toLowerCase().localeCompare(b.toLowerCase());
}

/** The FileStat type of find's %y letter (f, d, l; anything else is "other"). */
export function typeOfFindLetter(letter: string | undefined): DirEntry["type"] {
  return letter === "f" ? "file" : letter === "d" ? "directory" : letter === "l" ? "symlink" : "other";
}

/** The entries of `raw` in listing order, or a message saying why it is malformed. */
export function parseListing(raw: RawListing): DirEntry[] | { malformed: string } {
  const text = Buffer.from(raw.bytes.buffer, raw.bytes.byteOffset, raw.bytes.byteLength).toString("utf8");
  if (raw.format === "find") {
    const entries: DirEntry[] = [];
    for (const item of text.split("\0"))
      if (item !== "") entries.push({ name: item.slice(1), type: typeOfFindLetter(item[0]) });
    return entries;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { malformed: `Malformed listDir frame from warden-helper: ${(err as Error).message}` };
  }
  if (!Array.isArray(value)) return { malformed: "Malformed directory listing from warden-helper." };
  return value as DirEntry[];
}

/** `entries` (in listing order) as a SortedListing of `view`; `entries` itself is left as it is. */
export function sortedListingOf(entries: DirEntry[], view: ListingView): SortedListing {
  const keyed = entries.map((entry, i) => ({ key: entry.name.toLowerCase(), i }));
  keyed.sort((a, b) => a.key.localeCompare(b.key));
  const shown = Math.min(view.first, entries.length);
  const head: DirEntry[] = [];
  let headBytes = -1;
  let at = 0;
  while (at < shown && headBytes < view.headBytes + 2) {
    const entry = entries[keyed[at]!.i]!;
    head.push(entry);
    headBytes += Buffer.byteLength(entry.name) + 1;
    at++;
  }
  const rest: ListingRest = {
    count: shown - at,
    nameBytes: 0,
    nameNewlines: 0,
    directories: 0,
    symlinks: [],
    last: null,
  };
  for (; at < shown; at++) {
    const entry = entries[keyed[at]!.i]!;
    rest.nameBytes += Buffer.byteLength(entry.name);
    for (let n = entry.name.indexOf("\n"); n !== -1; n = entry.name.indexOf("\n", n + 1)) rest.nameNewlines++;
    if (entry.type === "directory") rest.directories++;
    else if (entry.type === "symlink" && rest.symlinks.length < view.maxSymlinks) rest.symlinks.push(entry);
    rest.last = entry;
  }
  return { total: entries.length, head, rest };
}
