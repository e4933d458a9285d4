/**
 * Reading a byte or line range of a host file without loading the rest: the `ReadRange` contract of
 * Sandbox.readFile, for files on the host (spill files). Line reads stream the file in 64 KiB
 * chunks, keep only the selection, and count every line.
 */
import { constants, createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import { InvalidArgumentError, NotFoundError } from "../errors.js";
import type { ReadFileResult, ReadRange } from "../sandbox/index.js";
import { LineRangeCollector } from "../truncate/index.js";
import { throwIfAborted } from "../util/index.js";

const CHUNK_BYTES = 64 * 1024;

/**
 * Reads `range` of the host file at `path`. Byte ranges return at most `length` bytes from
 * `offset` (fewer at end of file); line ranges return lines startLine.. (1-based, with their
 * newlines) capped at maxBytes, plus `totalLines`. Rejects NotFoundError for a missing file or a
 * symlink (never followed), InvalidArgumentError for a malformed range, AbortError when `signal` fires.
 */
export async function readHostFileRange(
  path: string,
  range: ReadRange,
  options: { signal?: AbortSignal } = {},
): Promise<ReadFileResult> {
  validateRange(range);
  throwIfAborted(options.signal);
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    // Never through a symlink (ELOOP): a spill file is a plain file its store created.
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ELOOP") throw new NotFoundError(`File not found: ${path}`);
    throw err;
  }
  try {
    const { size } = await handle.stat();
    if (range.kind === "bytes") {
      const length = Math.max(0, Math.min(range.length, size - range.offset));
      const data = Buffer.alloc(length);
      let done = 0;
      while (done < length) {
        const { bytesRead } = await handle.read(data, done, length - done, range.offset + done);
        if (bytesRead === 0) break;
        done += bytesRead;
      }
      return { data: data.subarray(0, done), totalBytes: size };
    }
    const collector = new LineRangeCollector(range);
    const stream = createReadStream("", {
      fd: handle,
      autoClose: false,
      highWaterMark: CHUNK_BYTES,
      start: 0,
    });
    for await (const chunk of stream) {
      throwIfAborted(options.signal);
      collector.push(chunk as Buffer);
    }
    const { data, totalLines } = collector.finish();
    return { data, totalBytes: size, totalLines };
  } finally {
    await handle.close();
  }
}

function validateRange(range: ReadRange): void {
  const bad = (field: string, value: number) =>
    new InvalidArgumentError(`Read range ${field} must be a non-negative integer, got ${value}.`);
  if (range.kind === "bytes") {
    if (!Number.isSafeInteger(range.offset) || range.offset < 0) throw bad("offset", range.offset);
    if (!Number.isSafeInteger(range.length) || range.length < 0) throw bad("length", range.length);
    return;
  }
  if (!Number.isSafeInteger(range.startLine) || range.startLine < 1) {
    throw new InvalidArgumentError(`Read range startLine must be an integer >= 1, got ${range.startLine}.`);
  }
  if (!Number.isSafeInteger(range.maxLines) || range.maxLines < 0) throw bad("maxLines", range.maxLines);
  if (!Number.isSafeInteger(range.maxBytes) || range.maxBytes < 0) throw bad("maxBytes", range.maxBytes);
}
