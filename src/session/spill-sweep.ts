/**
 * Sweeping spill directories a crashed controller left behind. A session removes its spill
 * directory when it closes; a controller killed before that leaves `warden-spill-<session>-XXXXXX`
 * (0700, full tool outputs) in its parent directory. Each directory names its owner in `.owner`
 * (io.warden.controller form, `hostname:pid`), so `warden gc` removes exactly those whose owner
 * process is gone from this host, as it does for containers (sandbox/labels.ts). A session that a
 * restarted `warden serve` adopted keeps its directory: adoption rewrites `.owner` to the live
 * server (spill-adopt.ts), and the server's start-up sweep, run after adoption, also names its live
 * sessions (`liveSessions`).
 */
import { lstat, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { controllerProcessAlive } from "../sandbox/index.js";

/** Name prefix of a session's spill directory. */
export const SPILL_DIR_PREFIX = "warden-spill-";
/** File in a spill directory naming the controller that owns it. */
export const SPILL_OWNER_FILE = ".owner";

/** One removed (or, in a dry run, removable) spill directory. */
export interface SpillSweepRemoval {
  path: string;
  /** Its `.owner`: the dead controller. */
  owner: string;
}

/**
 * Removes the spill directories directly under `dir` (default os.tmpdir()) whose owner process
 * ran on this host and no longer exists. Kept: directories of live owners, of other hosts or of
 * owners without a pid (`warden serve` clears its own at start), without a readable `.owner`
 * (still being created, or not warden's), not owned by this user, anything that is not a
 * plain directory (a symlink is never followed), and the directories of `liveSessions` (session
 * ids, from the directory's name `warden-spill-<session>-XXXXXX`). Never throws for an entry;
 * rejects only when `dir` cannot be listed for another reason than not existing.
 */
export async function sweepSpillDirs(
  options: { dir?: string; dryRun?: boolean; liveSessions?: ReadonlySet<string> } = {},
): Promise<SpillSweepRemoval[]> {
  const parent = resolve(options.dir ?? tmpdir());
  let names: string[];
  try {
    names = await readdir(parent);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw err;
  }
  const removed: SpillSweepRemoval[] = [];
  for (const name of names) {
    if (!name.startsWith(SPILL_DIR_PREFIX)) continue;
    // The name's middle is the session id (mkdtemp adds `-` and 6 characters).
    if (options.liveSessions?.has(name.slice(SPILL_DIR_PREFIX.length, -7))) continue;
    const path = join(parent, name);
    const owner = await deadOwnerOf(path);
    if (owner === undefined) continue;
    if (!options.dryRun) await rm(path, { recursive: true, force: true });
    removed.push({ path, owner });
  }
  return removed;
}

/** The owner of spill directory `path` when that owner is a dead process of this host, else undefined. */
async function deadOwnerOf(path: string): Promise<string | undefined> {
  try {
    const st = await lstat(path);
    if (!st.isDirectory() || (process.getuid && st.uid !== process.getuid())) return undefined;
    const owner = (await readFile(join(path, SPILL_OWNER_FILE), "utf8")).trim();
    return controllerProcessAlive(owner) === false ? owner : undefined;
  } catch {
    return undefined;
  }
}
