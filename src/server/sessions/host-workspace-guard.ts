/**
 * Guards sessions on host directories (`workspacePath`) against a link swapped in between the
 * check and the mount (red team): a sandbox with an `rw` workspace can rename a directory inside
 * it and put a symlink in its place, and Docker follows links when it mounts (or the copy reads).
 * So creations on overlapping paths (equal, inside or around each other) run one at a time, in the
 * order they were asked for; under that lock the path is resolved again and must be unchanged, and a path strictly inside a live session's `rw` workspace is refused, as that
 * sandbox could change it at any moment. A `copy` workspace is read file by file, through every
 * directory below it, so it must not overlap an `rw` workspace at all (equal, inside or around it:
 * a swapped subdirectory made the copy read host files, red team). Nothing else a tenant controls
 * can write there, so the path stays what was checked until the sandbox has it.
 *
 * Creations on disjoint paths cannot conflict, so they do not wait for each other: with one queue
 * for the whole server, a tenant's copy of 60,000 files held another tenant's create for 126 s
 * (red team).
 */
import { realpath } from "node:fs/promises";
import { InvalidArgumentError } from "../../errors.js";
import type { WorkspaceMode } from "../../sandbox/index.js";
import { isWithinRoot } from "../../tools/index.js";

/** Serializes the creation of sessions on overlapping host directories; see the file comment. */
export class HostWorkspaceGuard {
  /** Creations asked for and not yet settled: their canonical path and their settling. */
  readonly #inFlight = new Set<{ path: string; settled: Promise<unknown> }>();

  /**
   * Runs `create` once the guarded creations asked for before it on an overlapping path are done,
   * if `canonicalPath` (as resolved when the request was checked) still resolves to itself and does
   * not conflict with any of `liveRwWorkspaces()` (canonical paths, read under the lock) for `mode`
   * (see the file comment). Rejects InvalidArgumentError naming both paths otherwise.
   */
  run<T>(
    canonicalPath: string,
    mode: WorkspaceMode,
    liveRwWorkspaces: () => readonly string[],
    create: () => Promise<T>,
  ): Promise<T> {
    // Taken synchronously, so two overlapping creations are ordered as they were asked for.
    const before = [...this.#inFlight]
      .filter((e) => isWithinRoot(canonicalPath, e.path) || isWithinRoot(e.path, canonicalPath))
      .map((e) => e.settled);
    const turn = Promise.all(before).then(async () => {
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
    const entry = { path: canonicalPath, settled: turn.catch(() => undefined) };
    this.#inFlight.add(entry);
    void entry.settled.then(() => this.#inFlight.delete(entry));
    return turn;
  }
}
