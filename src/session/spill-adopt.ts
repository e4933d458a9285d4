/**
 * The spill store of a session that a restarted `warden serve` adopts (its sandbox outlived the
 * dead server): the session's spill directory (`warden-spill-<session>-XXXXXX`, spill-store.ts) is
 * taken over, so the handles its cut results named stay readable until the session closes, as the
 * results and spill-store.ts's NotFoundError promise, and closing the session removes it (issue 37
 * item 10: the start-up sweep removed them while the session lived on). The directory's `.owner`
 * is rewritten to this process, so neither the start-up sweep nor `warden gc` (spill-sweep.ts),
 * which remove directories of dead owners, take it while this process holds it.
 */
import { lstat, readdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { controllerId } from "../sandbox/index.js";
import { createSpillStore, type HostSpillStore, type SpillStoreOptions } from "./spill-store.js";
import { SPILL_DIR_PREFIX, SPILL_OWNER_FILE } from "./spill-sweep.js";

/** A spill file's name as HostSpillStore.create makes it: `<prefix>-<8 hex>.log`. */
const SPILL_FILE_NAME = /^[A-Za-z0-9_.-]{1,64}-[0-9a-f]{8}\.log$/;
/** Length of the random suffix mkdtemp gives a spill directory's name. */
const MKDTEMP_SUFFIX = 6;

/**
 * The session of `options.sessionId`'s spill directories under `options.dir` (default os.tmpdir()):
 * plain directories (a link is never followed) owned by this user, named exactly
 * `warden-spill-<sessionId>-XXXXXX` (so no other session's name matches).
 */
async function spillDirsOf(options: Pick<SpillStoreOptions, "dir" | "sessionId">): Promise<string[]> {
  const parent = resolve(options.dir ?? tmpdir());
  const prefix = `${SPILL_DIR_PREFIX}${options.sessionId}-`;
  const names = await readdir(parent).catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return [];
    throw err;
  });
  const dirs: string[] = [];
  for (const name of names.sort()) {
    if (!name.startsWith(prefix) || name.length !== prefix.length + MKDTEMP_SUFFIX) continue;
    const st = await lstat(join(parent, name));
    if (st.isDirectory() && (!process.getuid || st.uid === process.getuid())) dirs.push(join(parent, name));
  }
  return dirs;
}

/**
 * A HostSpillStore (createSpillStore's, with `options`) holding the spill files a previous process
 * left for this session: each directory of spillDirsOf is adopted (HostSpillStore.adopt) with its
 * regular files named as spill files, and its `.owner` rewritten to `options.owner` (default this
 * process). Rejects with the fs error when a directory cannot be read or its owner written.
 */
export async function adoptSpillStore(options: SpillStoreOptions): Promise<HostSpillStore> {
  const store = createSpillStore(options);
  for (const dir of await spillDirsOf(options)) {
    await writeFile(join(dir, SPILL_OWNER_FILE), `${options.owner ?? controllerId()}\n`, { mode: 0o600 });
    const files: Array<{ name: string; bytes: number }> = [];
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      if (!entry.isFile() || !SPILL_FILE_NAME.test(entry.name)) continue;
      files.push({ name: entry.name, bytes: (await lstat(join(dir, entry.name))).size });
    }
    store.adopt(dir, files);
  }
  return store;
}
