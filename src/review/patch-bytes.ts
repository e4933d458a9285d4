/**
 * The patch of a large change as UTF-8 bytes, rendered whole off the event loop. Issue 11: a GET
 * /changes of three rewritten 12,000-line files (a 1.3 MB patch) still cost the event loop about
 * 10 ms each after its hunks moved to a worker: the git blob ids (sha1 of every side), decoding
 * both sides to text, copying the hunk texts back, joining them, and encoding the answer to UTF-8;
 * a binary file's `GIT binary patch` (deflate and base85 of up to 1 MiB a side) too. Here one job of
 * the bounded pool (util/worker-pool.ts, lowest CPU priority) renders the same patch with patch.ts's
 * own functions (patch-bytes-worker.ts) and answers its bytes; the event loop only copies the sides there
 * and the bytes back. Small changes, and a full queue or a dead worker, are rendered here as before
 * (formatPatch, whose diffs have their own bounds and pool).
 */
import { lazySharedPool, runOrFallBack, throwIfAborted, workerModule } from "../util/index.js";
import type { FileChange } from "./changes.js";
import { formatPatch } from "./patch.js";

/** Changes whose sides together reach this many bytes are rendered in the worker pool (64 KiB). */
export const PATCH_WORKER_MIN_BYTES = 64 * 1024;

/** The process-wide patch pool (lazySharedPool), 32 queued patches; exported for tests. */
export const patchPool = lazySharedPool<FileChange[], Uint8Array>(
  workerModule(import.meta.url, "patch-bytes-worker"),
  32,
);

/** Bytes of every side of `changes`. */
function changeBytes(changes: readonly FileChange[]): number {
  let bytes = 0;
  for (const c of changes) bytes += (c.oldBytes?.length ?? 0) + (c.newBytes?.length ?? 0);
  return bytes;
}

/**
 * formatPatch's text as UTF-8 bytes: from the worker pool when the sides reach
 * PATCH_WORKER_MIN_BYTES, else (or when the pool is full or its worker died) rendered here.
 * Rejects only AbortError when `signal` fires.
 */
export async function formatPatchBytes(
  changes: FileChange[],
  options: { signal?: AbortSignal } = {},
): Promise<Buffer> {
  throwIfAborted(options.signal);
  if (changeBytes(changes) >= PATCH_WORKER_MIN_BYTES) {
    const bytes = await runOrFallBack(patchPool(), changes, options.signal);
    if (bytes) return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  return Buffer.from(await formatPatch(changes, options));
}
