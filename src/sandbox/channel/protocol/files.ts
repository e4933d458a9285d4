/**
 * The Sandbox file operations over the channel: each is one request and one reply, with no
 * docker exec. Paths are container paths; relative ones resolve against /workspace in the helper.
 * Errors: NotFoundError (ENOENT/ENOTDIR), InvalidArgumentError (EISDIR, bad range), SandboxError.
 */
import { SandboxError } from "../../../errors.js";
import { checkFileMode, checkReadRange } from "../../io-contract.js";
import type { RawListing } from "../../listing.js";
import { listingEntries } from "../../listing-sort.js";
import type { DirEntry, FileStat, ReadFileResult, ReadRange } from "../../types.js";
import type { ChannelClient } from "./client.js";
import { decodeJsonData, encodeJsonData, FrameType } from "./frame.js";
import { parseJson, type ReadRequestBody, toReadResultBody } from "./messages.js";

type Signal = { signal?: AbortSignal };

/**
 * Lines in a file as the docker-exec path counts them (`wc -l`, plus one for a final line
 * without a newline): "a\nb\n" and "a\nb" have 2 lines, an empty file 0.
 */
function totalLinesFrom(newlines: number, endsWithNewline: boolean, totalBytes: number): number {
  return newlines + (totalBytes > 0 && !endsWithNewline ? 1 : 0);
}

/**
 * Reads a byte range, or a line range (1-based `startLine`, at most `maxLines` lines and
 * `maxBytes` bytes, cut at the byte cap even inside a line), streaming the file in the helper:
 * memory is the range, never the file. Line reads also count the file's lines (one pass).
 */
export async function channelReadFile(
  client: ChannelClient,
  path: string,
  range: ReadRange,
  options: Signal & { countLines?: boolean } = {},
): Promise<ReadFileResult> {
  checkReadRange(range);
  const body: ReadRequestBody =
    range.kind === "bytes"
      ? { path, kind: "bytes", offset: range.offset, length: range.length }
      : {
          path,
          kind: "lines",
          startLine: range.startLine,
          maxLines: range.maxLines,
          maxBytes: range.maxBytes,
          countLines: options.countLines ?? true,
        };
  const frame = await client.call(
    FrameType.read,
    Buffer.from(JSON.stringify(body)),
    "reading",
    path,
    options.signal,
  );
  const { json, data } = decodeJsonData(frame.payload);
  const res = toReadResultBody(json);
  const out: ReadFileResult = { data: Buffer.from(data), totalBytes: res.totalBytes };
  if (range.kind === "lines" && res.counted)
    out.totalLines = totalLinesFrom(res.newlines, res.endsWithNewline, res.totalBytes);
  return out;
}

/**
 * Writes `data` atomically (temp file + rename in the same directory), creating parents (0755).
 * `mode` (0..0o7777, exact bits) defaults to the old file's mode, else 0o644. At most 64 MiB per
 * call (one frame). Rejects InvalidArgumentError for a bad mode or a directory target.
 */
export async function channelWriteFile(
  client: ChannelClient,
  path: string,
  data: Buffer,
  options: Signal & { mode?: number } = {},
): Promise<void> {
  const { mode } = options;
  checkFileMode(mode);
  const payload = encodeJsonData({ path, ...(mode !== undefined ? { mode } : {}) }, data);
  await client.call(FrameType.write, payload, "writing", path, options.signal);
}

/** lstat: metadata of the path itself (links not followed), or null when nothing is there. */
export async function channelStat(
  client: ChannelClient,
  path: string,
  options: Signal = {},
): Promise<FileStat | null> {
  const frame = await client.call(FrameType.stat, pathBody(path), "stat of", path, options.signal);
  const v = parseJson(frame.payload, "stat") as FileStat | null;
  if (v === null) return null;
  if (typeof v !== "object" || typeof v.size !== "number")
    throw new SandboxError("Malformed stat result from warden-helper.");
  return { type: v.type, size: v.size, mode: v.mode, mtimeMs: v.mtimeMs };
}

/** Canonical path as GNU `realpath -m` (physical): symlinks followed; missing tails appended lexically. */
export async function channelRealpath(
  client: ChannelClient,
  path: string,
  options: Signal = {},
): Promise<string> {
  const frame = await client.call(FrameType.realpath, pathBody(path), "resolving", path, options.signal);
  const v = parseJson(frame.payload, "realpath");
  if (typeof v !== "string") throw new SandboxError("Malformed realpath result from warden-helper.");
  return v;
}

/** A directory's listDir frame (listing.ts's "json" format: `[{name, type}]`), unparsed. */
export async function channelListDirRaw(
  client: ChannelClient,
  path: string,
  options: Signal = {},
): Promise<RawListing> {
  const frame = await client.call(FrameType.listDir, pathBody(path), "listing", path, options.signal);
  return { format: "json", bytes: frame.payload };
}

/** Entries of a directory, dotfiles included, unsorted, each with its own (unfollowed) type. */
export async function channelListDir(
  client: ChannelClient,
  path: string,
  options: Signal = {},
): Promise<DirEntry[]> {
  return listingEntries(await channelListDirRaw(client, path, options));
}

/**
 * Extracts a tar archive (directories, files, symlinks; modes and mtimes kept) under `dir` as the
 * sandbox user, in the helper: no docker-untar process, no archive API round trip. At most
 * 64 MiB per call. Rejects InvalidArgumentError for an entry that leaves `dir`.
 */
export async function channelUntar(
  client: ChannelClient,
  dir: string,
  archive: Buffer,
  options: Signal = {},
): Promise<void> {
  await client.call(
    FrameType.untar,
    encodeJsonData({ dir }, archive),
    "extracting into",
    dir,
    options.signal,
  );
}

function pathBody(path: string): Buffer {
  return Buffer.from(JSON.stringify({ path }));
}
