/**
 * `--apply`: writes a run's changes to the host workspace, only when every file it touches is still
 * as it was when the session started (hash compare against the HostSnapshot), each file atomically
 * (temp file in the same directory, then rename). Symlinks and other special entries are never applied;
 * no write follows a host symlink out of the workspace.
 */
import { randomBytes } from "node:crypto";
import { mkdir, realpath, rename, rm, unlink, writeFile } from "node:fs/promises";
import { basename, dirname, join, relative } from "node:path";
import { PathOutsideWorkspaceError, WardenError } from "../errors.js";
import type { FileChange } from "./changes.js";
import { hostPathFor } from "./host-paths.js";
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

/** The deepest existing ancestor of `path`, canonical. */
async function realAncestor(path: string): Promise<string> {
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    const real = await realpath(dir).catch(() => undefined);
    if (real !== undefined) return real;
    if (dirname(dir) === dir) return dir;
  }
}

async function writeAtomically(target: string, data: Buffer, mode: number): Promise<void> {
  await mkdir(dirname(target), { recursive: true });
  const temp = join(dirname(target), `.${basename(target)}.warden-${randomBytes(6).toString("hex")}.tmp`);
  try {
    await writeFile(temp, data, { mode, flag: "wx" });
    await rename(temp, target);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
}

/**
 * Checks, then applies. Rejects HostChangedError (nothing written) when any touched host file differs
 * from `snapshot`, PathOutsideWorkspaceError when a path or a host symlink in its parents leads out of
 * `hostRoot`, or the fs error of a failed write (files before it stay applied, each one whole).
 */
export async function applyChanges(
  hostRoot: string,
  changes: FileChange[],
  options: { snapshot: HostSnapshot; signal?: AbortSignal },
): Promise<ApplyResult> {
  const result: ApplyResult = { written: [], deleted: [], skipped: [] };
  const root = await realpath(hostRoot);
  const todo = patchableChanges(changes);
  for (const change of changes) {
    if (change.special !== undefined)
      result.skipped.push({ path: change.path, reason: `${change.special} not applied` });
  }
  const conflicts: string[] = [];
  for (const change of todo) {
    const target = hostPathFor(root, change.path);
    const parent = await realAncestor(target);
    const rel = relative(root, parent);
    if (rel === ".." || rel.startsWith("../")) throw new PathOutsideWorkspaceError(change.path, parent);
    const current = await hashHostPath(target, options.signal);
    if (current !== options.snapshot.get(change.path)) conflicts.push(change.path);
  }
  if (conflicts.length > 0) throw new HostChangedError(conflicts);
  for (const change of todo) {
    const target = hostPathFor(root, change.path);
    if (change.newBytes === null) {
      await unlink(target).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== "ENOENT") throw err;
      });
      result.deleted.push(change.path);
    } else {
      await writeAtomically(target, change.newBytes, change.mode ?? 0o644);
      result.written.push(change.path);
    }
  }
  return result;
}
