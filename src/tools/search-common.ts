/**
 * Pieces shared by grep and find: Pi's limits (coding-agent grep.ts / find.ts and truncate.ts), path
 * display relative to the search root, confinement of returned paths, and a NUL/newline record
 * splitter with bounded memory for streamed command output.
 */
import { posix } from "node:path";
import { DEFAULT_MAX_BYTES } from "../truncate/index.js";
import { isWithinRoots } from "./paths.js";

/** Output cap of grep and find, in bytes (Pi's DEFAULT_MAX_BYTES, 50 KiB). */
export const SEARCH_MAX_BYTES = DEFAULT_MAX_BYTES;
/** grep cuts each shown line to this many characters (Pi's GREP_MAX_LINE_LENGTH). */
export const GREP_MAX_LINE_CHARS = 500;

/**
 * Cuts `line` to `maxChars` UTF-16 units (never inside a surrogate pair) and appends Pi's marker
 * `... [truncated]`. Returns the line and whether it was cut.
 */
export function truncateLine(
  line: string,
  maxChars = GREP_MAX_LINE_CHARS,
): { text: string; truncated: boolean } {
  if (line.length <= maxChars) return { text: line, truncated: false };
  let end = maxChars;
  const code = line.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return { text: `${line.slice(0, end)}... [truncated]`, truncated: true };
}

/**
 * Display form of a path a search returned: relative POSIX path under `searchRoot` for a directory
 * search, the base name for a file search. Returns null when the normalised absolute path is outside
 * `roots` (filter after expansion: whatever the pattern was, nothing outside is shown).
 */
export function displaySearchPath(
  absPath: string,
  searchRoot: string,
  rootIsDir: boolean,
  roots: readonly string[],
): string | null {
  const abs = posix.resolve(searchRoot, absPath);
  if (!isWithinRoots(abs, roots)) return null;
  if (!rootIsDir) return posix.basename(abs);
  const rel = posix.relative(searchRoot, abs);
  if (rel === "" || rel === ".." || rel.startsWith("../")) return null;
  return rel;
}

/**
 * Splits a byte stream into records ending with `separator` (a newline or NUL byte), decoding each
 * as UTF-8. A record longer than `maxRecordBytes` is dropped (counted in `dropped`) instead of
 * being buffered, so memory stays bounded whatever the command prints.
 */
export class RecordSplitter {
  #parts: Buffer[] = [];
  #size = 0;
  #skipping = false;
  /** Records dropped for exceeding `maxRecordBytes`. */
  dropped = 0;

  constructor(
    private readonly separator: number,
    private readonly maxRecordBytes: number,
  ) {}

  /** Feeds a chunk; returns the records it completed. */
  push(chunk: Buffer): string[] {
    const records: string[] = [];
    let from = 0;
    for (let i = chunk.indexOf(this.separator); i !== -1; i = chunk.indexOf(this.separator, from)) {
      this.#append(chunk.subarray(from, i));
      if (!this.#skipping) records.push(Buffer.concat(this.#parts, this.#size).toString("utf8"));
      this.#parts = [];
      this.#size = 0;
      this.#skipping = false;
      from = i + 1;
    }
    this.#append(chunk.subarray(from));
    return records;
  }

  /** The last record when the stream did not end with a separator (empty array otherwise). */
  end(): string[] {
    const rest =
      !this.#skipping && this.#size > 0 ? [Buffer.concat(this.#parts, this.#size).toString("utf8")] : [];
    this.#parts = [];
    this.#size = 0;
    return rest;
  }

  #append(part: Buffer): void {
    if (this.#skipping || part.length === 0) return;
    if (this.#size + part.length > this.maxRecordBytes) {
      this.#skipping = true;
      this.dropped++;
      this.#parts = [];
      this.#size = 0;
      return;
    }
    this.#parts.push(Buffer.from(part));
    this.#size += part.length;
  }
}
