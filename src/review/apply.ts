/**
 * `--apply` and `warden apply`: writes a session's change to the host workspace as a three-way merge
 * (merge.ts) of the host as it is now with the session's change against the state the session
 * started from. Files the host did not touch meanwhile take the session's version; host edits that
 * do not overlap the session's are kept in the merged file; when any file conflicts, nothing is
 * written and every conflicting file is named with its reason. A path with a `.git` component at any
 * depth is never written. What is applied is decided by apply-rule.ts, the rule the saved patch
 * follows too: links made in the sandbox and other special entries are never applied; a host link
 * the session replaced by a regular file or deleted is (the rename or unlink replaces or removes the
 * link itself). Each file is written atomically (temp file in the same directory, then rename),
 * with its permission bits only, never a set-user-ID, set-group-ID or sticky bit (hostFileMode). No
 * write follows a host symlink: every parent directory is opened with O_NOFOLLOW beneath the root
 * (host-read.ts), and a parent that is a link is refused.
 */
import { randomBytes } from "node:crypto";
import { mkdir, rename, rm, unlink, writeFile } from "node:fs/promises";
import { PathOutsideWorkspaceError, WardenError } from "../errors.js";
import { throwIfAborted } from "../util/index.js";
import { splitApplicable } from "./apply-rule.js";
import type { FileChange } from "./changes.js";
import { childPath, type HostDir, openChildDir, openHostRoot, relativeNames } from "./host-read.js";
import { type MergeOutcome, mergeFile } from "./merge.js";
import { quotePath } from "./quote-path.js";

/** Some files conflict with host edits made since the session started. Nothing was written. */
export class MergeConflictError extends WardenError {
  constructor(readonly conflicts: Array<{ path: string; reason: string }>) {
    const n = conflicts.length;
    super(
      "CONFLICT",
      `Not applied: ${n} file${n === 1 ? "" : "s"} conflict${n === 1 ? "s" : ""} with host edits made since the session started:\n` +
        conflicts.map((c) => `  ${quotePath(c.path)}: ${c.reason}`).join("\n") +
        "\nNothing was written; your edits are untouched. Resolve them (or undo the host edits) and apply the saved patch again with `warden apply`.",
    );
  }
}

/**
 * What was done. `merged` lists the written files that also kept host edits made meanwhile; `skipped`
 * lists entries not applied (symlinks, files over the review limit, ignored paths) with the reason.
 */
export interface ApplyResult {
  written: string[];
  deleted: string[];
  merged: string[];
  skipped: Array<{ path: string; reason: string }>;
}

/**
 * Runs `use` with the parent directory of `path` opened beneath `root`, creating missing directories.
 * Throws PathOutsideWorkspaceError when a parent is a link or not a directory.
 */
async function withParentDir<T>(root: string, path: string, use: (dir: HostDir, name: string) => Promise<T>) {
  const names = relativeNames(root, path);
  const name = names.pop()!;
  const opened: HostDir[] = [await openHostRoot(root)];
  try {
    for (const part of names) {
      const parent = opened[opened.length - 1]!;
      await mkdir(childPath(parent, part)).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== "EEXIST") throw err;
      });
      const next = await openChildDir(parent, part);
      if (!next)
        throw new PathOutsideWorkspaceError(path, `${parent.path}/${part} (not a directory: a link or file)`);
      opened.push(next);
    }
    return await use(opened[opened.length - 1]!, name);
  } finally {
    await Promise.all(opened.map((d) => d.handle.close()));
  }
}

/**
 * The mode a file is written to the host with: its permission bits (0o777) only. A set-user-ID,
 * set-group-ID or sticky bit is never applied, whatever the sandbox's file or the host's old one
 * had: the sandbox's user may set them on its own files (`chmod 6777 s`), and a host file of the
 * user who applies (root, in a container or CI) with them would run the session's bytes with
 * that user's privileges (attack-38a). A patch carries no such bit either (patch.ts: 100644 or
 * 100755). The process umask then applies as for any created file.
 */
function hostFileMode(mode: number): number {
  return mode & 0o777;
}

async function writeAtomically(dir: HostDir, name: string, data: Buffer, mode: number): Promise<void> {
  const temp = childPath(dir, `.${name}.warden-${randomBytes(6).toString("hex")}.tmp`);
  try {
    // "wx" is O_CREAT|O_EXCL: it never follows a link at the temp name.
    await writeFile(temp, data, { mode: hostFileMode(mode), flag: "wx" });
    await rename(temp, childPath(dir, name));
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
}

/** Writes merge outcomes (all "write" or "same"); fs errors propagate (earlier files stay applied, each whole). */
async function writeOutcomes(
  root: string,
  outcomes: MergeOutcome[],
  modes: Map<string, number | undefined>,
  result: ApplyResult,
): Promise<void> {
  for (const outcome of outcomes) {
    if (outcome.kind !== "write") continue;
    const { path, bytes } = outcome;
    await withParentDir(root, path, async (dir, name) => {
      if (bytes === null) {
        await unlink(childPath(dir, name)).catch((err: NodeJS.ErrnoException) => {
          if (err.code !== "ENOENT") throw err;
        });
        result.deleted.push(path);
      } else {
        await writeAtomically(dir, name, bytes, modes.get(path) ?? 0o644);
        result.written.push(path);
        if (outcome.merged) result.merged.push(path);
      }
    });
  }
}

/**
 * Merges, then writes (see module doc). `changes[].oldBytes` must be the session-start side (the
 * base). Rejects MergeConflictError (nothing written) when any file conflicts, GitMissingError when a
 * text merge needs git and it is missing, PathOutsideWorkspaceError when a path leads out of
 * `hostRoot` or a parent directory on the host is a symlink (never written through), or the fs error
 * of a failed write (files before it stay applied, each one whole).
 */
export async function applyChanges(
  hostRoot: string,
  changes: FileChange[],
  options: { signal?: AbortSignal } = {},
): Promise<ApplyResult> {
  // Checked here, where files are written, so no caller (--include-ignored, a saved patch) skips it.
  const { applicable: todo, refused } = splitApplicable(changes);
  const result: ApplyResult = { written: [], deleted: [], merged: [], skipped: refused };
  const outcomes: MergeOutcome[] = [];
  for (const change of todo) {
    throwIfAborted(options.signal);
    outcomes.push(
      await mergeFile(hostRoot, {
        path: change.path,
        base: change.oldBytes,
        theirs: change.newBytes,
        ...(change.oldLink ? { baseLink: true } : {}),
      }),
    );
  }
  const conflicts = outcomes.flatMap((o) =>
    o.kind === "conflict" ? [{ path: o.path, reason: o.reason }] : [],
  );
  if (conflicts.length > 0) throw new MergeConflictError(conflicts);
  await writeOutcomes(hostRoot, outcomes, new Map(todo.map((c) => [c.path, c.mode])), result);
  return result;
}
