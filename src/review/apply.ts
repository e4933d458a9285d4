/**
 * `--apply`: writes a run's changes to the host workspace, only when every file it touches is still
 * as it was when the session started (hash compare against the HostSnapshot), each file atomically
 * (temp file in the same directory, then rename). Symlinks and other special entries are never applied;
 * no write follows a host symlink: every parent directory is opened with O_NOFOLLOW beneath the
 * root (host-read.ts), and a parent that is a link is refused.
 */
import { randomBytes } from "node:crypto";
import { mkdir, rename, rm, unlink, writeFile } from "node:fs/promises";
import { PathOutsideWorkspaceError, WardenError } from "../errors.js";
import type { FileChange } from "./changes.js";
import { childPath, type HostDir, openChildDir, openHostRoot, relativeNames } from "./host-read.js";
import { type HostSnapshot, hashHostPath } from "./host-snapshot.js";
import { patchableChanges } from "./patch.js";

/** The host changed under the run: `paths` differ from the session-start snapshot. Nothing was written. */
export class HostChangedError extends WardenError {
  constructor(readonly paths: string[]) {
    super(
      "CONFLICT",
      `Not applied: ${paths.length} host file${paths.length === 1 ? "" : "s"} changed since the run started ` +
        `(${paths.join(", ")}). Nothing was written; use the exported patch (--export-patch) and merge by hand.`,
    );
  }
}

/** What was done. `skipped` lists special entries (symlinks etc.) with the reason. */
export interface ApplyResult {
  written: string[];
  deleted: string[];
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

async function writeAtomically(dir: HostDir, name: string, data: Buffer, mode: number): Promise<void> {
  const temp = childPath(dir, `.${name}.warden-${randomBytes(6).toString("hex")}.tmp`);
  try {
    // "wx" is O_CREAT|O_EXCL: it never follows a link at the temp name.
    await writeFile(temp, data, { mode, flag: "wx" });
    await rename(temp, childPath(dir, name));
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
}

/**
 * Checks, then applies. Rejects HostChangedError (nothing written) when any touched host file differs
 * from `snapshot`, PathOutsideWorkspaceError when a path leads out of `hostRoot`
 * or a parent directory on the host is a symlink (never written through), or the fs error of a failed write (files before it stay applied, each one whole).
 */
export async function applyChanges(
  hostRoot: string,
  changes: FileChange[],
  options: { snapshot: HostSnapshot; signal?: AbortSignal },
): Promise<ApplyResult> {
  const result: ApplyResult = { written: [], deleted: [], skipped: [] };
  const root = hostRoot;
  const todo = patchableChanges(changes);
  for (const change of changes) {
    if (change.special !== undefined)
      result.skipped.push({ path: change.path, reason: `${change.special} not applied` });
  }
  const conflicts: string[] = [];
  for (const change of todo) {
    const current = await hashHostPath(root, change.path, options.signal);
    if (current !== options.snapshot.get(change.path)) conflicts.push(change.path);
  }
  if (conflicts.length > 0) throw new HostChangedError(conflicts);
  for (const change of todo) {
    const bytes = change.newBytes;
    await withParentDir(root, change.path, async (dir, name) => {
      if (bytes === null) {
        await unlink(childPath(dir, name)).catch((err: NodeJS.ErrnoException) => {
          if (err.code !== "ENOENT") throw err;
        });
        result.deleted.push(change.path);
      } else {
        await writeAtomically(dir, name, bytes, change.mode ?? 0o644);
        result.written.push(change.path);
      }
    });
  }
  return result;
}
