/**
 * The truncation of ls's output when only its head lines are here (pure). The sandbox carries the
 * first shown entries whose names reach the byte cap plus 2 bytes, and the rest only summarised
 * (SortedListing, src/sandbox/listing.ts); truncateHead of that head already cuts where it would
 * cut the whole text (the cut lies inside the head), so only the whole text's totals are added.
 */
import type { ListingRest } from "../sandbox/index.js";
import { DEFAULT_MAX_BYTES, type TruncationResult, truncateHead } from "../truncate/index.js";

/**
 * truncateHead (50 KiB, no line cap) of the whole listing text: `headText` (the head's lines joined
 * by "\n") followed by the `rest` lines; `restLinkDirs[i]` is true when `rest.symlinks[i]` shows as a
 * directory ("/" added). Equal to truncateHead of the whole text (test/unit/tools/ls-listing.test.ts
 * compares the two).
 */
export function listingTruncation(
  headText: string,
  rest: ListingRest,
  restLinkDirs: boolean[],
): TruncationResult {
  const truncation = truncateHead(headText, {
    maxLines: Number.MAX_SAFE_INTEGER,
    maxBytes: DEFAULT_MAX_BYTES,
  });
  const last = rest.last;
  if (rest.count === 0 || last === null) return truncation;
  const linkDirs = restLinkDirs.filter(Boolean).length;
  const lastIsDir =
    last.type === "directory" || (rest.symlinks.at(-1)?.name === last.name && restLinkDirs.at(-1) === true);
  const endsWithNewline = !lastIsDir && last.name.endsWith("\n");
  const headNewlines = headText.split("\n").length - 1;
  return {
    ...truncation,
    totalLines: headNewlines + rest.count + rest.nameNewlines + (endsWithNewline ? 0 : 1),
    totalBytes: truncation.totalBytes + rest.count + rest.nameBytes + rest.directories + linkDirs,
  };
}
