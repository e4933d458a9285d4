/**
 * The baseline of a workspace taken over after a restart: what changedPaths compares with, read
 * again from the host directory it was copied from (a backend's `adopt`, AdoptRequest.workspaceHostPath).
 */
import { packDirectory, type WorkspaceHashes } from "./workspace-copy.js";

/**
 * The hashes of every file under `hostPath` (packDirectory's, the same a copy-mode sandbox keeps
 * at creation); an empty map without a path, or when the directory cannot be read any more.
 */
export async function baselineOf(hostPath: string | undefined): Promise<WorkspaceHashes> {
  if (!hostPath) return new Map();
  const packed = packDirectory(hostPath);
  packed.stream.resume();
  try {
    await packed.done;
  } catch {
    return new Map();
  }
  return packed.hashes;
}
