/**
 * Spill handles: how the model names a spill file. A handle is `/spill/<name>`, an absolute path
 * outside the sandbox's roots (so it is never a workspace file; sessions reject a mount at /spill),
 * that only the session's SpillStore resolves, by exact name. The host path never reaches the model.
 */

/** Prefix of every spill handle. */
export const SPILL_HANDLE_PREFIX = "/spill/";

/** The handle of spill file `name` (a bare file name). */
export function spillHandle(name: string): string {
  return `${SPILL_HANDLE_PREFIX}${name}`;
}

/** True when `path` is in the spill handle namespace (whether or not such a file exists). */
export function isSpillHandle(path: string): boolean {
  return path.startsWith(SPILL_HANDLE_PREFIX);
}
