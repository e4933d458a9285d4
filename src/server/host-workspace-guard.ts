/**
 * Guards sessions on host directories (`workspacePath`) against a link swapped in between the
 * check and the mount (red team): a sandbox with an `rw` workspace can rename a directory inside
 * it and put a symlink in its place, and Docker follows links when it mounts (or the copy reads).
 * So such sessions are created one at a time; under that lock the path is resolved again and must
 * be unchanged, and a path strictly inside a live session's `rw` workspace is refused, as that
 * sandbox could change it at any moment. Nothing else a tenant controls can write there, so the
 * path stays what was checked until the sandbox has it.
 */
import { realpath } from "node:fs/promises";
import { InvalidArgumentError } from "../errors.js";
import { isWithinRoot } from "../tools/paths.js";

/** Serializes the creation of sessions on host directories; see the file comment. */
export class HostWorkspaceGuard {
  #tail: Promise<unknown> = Promise.resolve();

  /**
   * Runs `create` once the guarded creations before it are done, if `canonicalPath` (as resolved
   * when the request was checked) still resolves to itself and lies in none of `liveRwWorkspaces()`
   * (canonical paths, read under the lock). Rejects InvalidArgumentError naming the path otherwise.
   */
  run<T>(
    canonicalPath: string,
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
      const outer = liveRwWorkspaces().find((rw) => rw !== canonicalPath && isWithinRoot(canonicalPath, rw));
      if (outer !== undefined) {
        throw new InvalidArgumentError(
          `workspacePath '${canonicalPath}' lies inside '${outer}', the rw workspace of a live session, whose sandbox could replace it with a link; close that session first or upload the workspace.`,
        );
      }
      return create();
    });
    this.#tail = turn.catch(() => undefined);
    return turn;
  }
}
