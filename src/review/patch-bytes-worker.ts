/**
 * The worker module of patch-bytes.ts's pool (util/worker-pool.ts): FileChange[] in (their bytes as
 * Uint8Array, as a structured clone gives them), the patch's UTF-8 bytes out, rendered by patch.ts's
 * patchFile with each section's hunk text built here (hunkTextOf), not in another pool.
 */
import type { FileChange } from "./changes.js";
import { patchFile } from "./patch.js";
import { hunkTextOf } from "./patch-hunks.js";

const asBuffer = (bytes: Uint8Array | null): Buffer | null =>
  bytes === null ? null : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** The patch of `changes` as UTF-8 bytes. */
export async function runJob(changes: FileChange[]): Promise<Buffer> {
  const texts: string[] = [];
  for (const change of changes) {
    const patch = await patchFile(
      { ...change, oldBytes: asBuffer(change.oldBytes), newBytes: asBuffer(change.newBytes) },
      undefined,
      async (oldText, newText) => hunkTextOf(oldText, newText),
    );
    texts.push(patch.text);
  }
  return Buffer.from(texts.join(""));
}
