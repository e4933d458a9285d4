/**
 * Guards sessions on host directories (`workspacePath`) against a link swapped in between the
 * check and the mount (red team): a sandbox with an `rw` workspace can rename a directory inside
 * it and put a symlink in its place, and Docker follows links when it mounts (or the copy reads).
 * So such sessions are created one at a time; under that lock the path is resolved again and must
 * be unchanged, and a path strictly inside a live session's `rw` workspace is refused, as that
 * sandbox could change it at any moment. A `copy` workspace is read file by file, through every
 * directory below it, so it must not overlap an `rw` workspace at all (equal, inside or around it:
 * a swapped subdirectory made the copy read host files, red team). Nothing else a tenant controls
 * can write there, so the path stays what was checked until the sandbox has it.
 */
import { realpath } from "node:fs/promises";
import { InvalidArgumentError } from "../errors.js";
import type { WorkspaceMode } from "../sandbox/index.js";
import { isWithinRoot } from "../tools/index.js";

/** Serializes the creation of sessions on host directories; see the file comment. */
export class HostWorkspaceGuard {
  #tail: Promise<unknown> = Promise.resolve();

  /**
   * Runs `create` once the guarded creations before it are done, if `canonicalPath` (as resolved
   * when the request was checked) still resolves to itself and does not conflict with any of
   * `liveRwWorkspaces()` (canonical paths, read under the lock) for `mode` (see the file comment).
   * Rejects InvalidArgumentError naming both paths otherwise.
   */
  run<T>(
    canonicalPath: string,
    mode: WorkspaceMode,
    liveRwWorkspaces: () => readonly string[],
    create: () => Promise<T>,
  ): Promise<T> {
    const turn = this.#tail.then(async () => {
      const now = await realpath(canonicalPath).catch(() => undefined);
      if (now !== canonicalPath) {
        throw new InvalidArgumentError(
          `workspacePath '${canonicalPath}' changed while the session was being created; send the request again.`,
        );
      }
      const conflicts = (rw: string) =>
        mode === "copy"
          ? isWithinRoot(canonicalPath, rw) || isWithinRoot(rw, canonicalPath)
          : rw !== canonicalPath && isWithinRoot(canonicalPath, rw);
      const rw = liveRwWorkspaces().find(conflicts);
      if (rw !== undefined) {
        throw new InvalidArgumentError(
          `workspacePath '${canonicalPath}' overlaps '${rw}', the rw workspace of a live session, whose sandbox could replace a directory in it with a link; close that session first or upload the workspace.`,
        );
      }
      return create();
    });
    this.#tail = turn.catch(() => undefined);
    return turn;
  }
}
