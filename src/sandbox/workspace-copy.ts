/**
 * Copy-mode workspace: packs a host directory into a tar stream (tar-stream) for
 * `PUT /containers/{id}/archive` and records a sha256 of every file and symlink on the way, the
 * baseline for `changedPaths`. Entries are owned by the given uid:gid (the sandbox's; 65534, nobody,
 * when none is given: the archive API extracts as root and keeps it) and keep their permission bits; names
 * of any length and unicode names go through PAX headers; symlinks stay links (their target is
 * not followed); empty directories are kept; sockets, fifos and devices are skipped; entries the
 * `exclude` predicate names (workspace-exclude.ts) are left out. The host directory is only read.
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { lstat, readdir, readFile, readlink } from "node:fs/promises";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { pipeline } from "node:stream/promises";
import tar, { type Header } from "tar-stream";
import type { ExcludePredicate } from "./workspace-exclude.js";
import { HASH_MAX_FILE_BYTES, metaRecord, type WorkspaceHashes } from "./workspace-hashes.js";

export type { WorkspaceHashes };

/** A tar stream of `hostDir` plus the hashes, complete once `done` resolves. */
export interface PackedDirectory {
  /** The archive as a Node stream (what dockerode's archive and build calls take). */
  stream: PassThrough;
  hashes: WorkspaceHashes;
  /** Resolves when every entry is written; rejects on a host read error. */
  done: Promise<void>;
}

/**
 * Starts packing `hostDir` (entries relative to it), entries owned by `uid`:`gid` (default
 * 65534:65534; what the archive API gives them, while warden-helper's untar makes them its own).
 * Read errors reject `done` and destroy the stream.
 */
export function packDirectory(
  hostDir: string,
  options: { uid?: number; gid?: number; exclude?: ExcludePredicate } = {},
): PackedDirectory {
  const pack = tar.pack();
  const hashes: WorkspaceHashes = new Map();
  const owner = tarOwner(options.uid ?? NOBODY, options.gid ?? NOBODY);
  const done = (async () => {
    try {
      await walk(hostDir, "", pack, hashes, owner, options.exclude);
      pack.finalize();
    } catch (err) {
      pack.destroy(err as Error);
      throw err;
    }
  })();
  done.catch(() => {});
  return { stream: toNodeStream(pack), hashes, done };
}

/** The owner of entries packed without one: nobody (65534), never root. */
const NOBODY = 65534;

/** Largest id a USTAR header's uid/gid field holds as tar-stream writes it (6 octal digits). */
const USTAR_MAX_ID = 0o777777;

/** The owner fields of a tar header (tar-stream's), and of the PAX records it writes. */
export interface TarOwner {
  uid: number;
  gid: number;
  pax?: Record<string, string>;
}

/**
 * The tar header fields giving an entry owner `uid`:`gid`. USTAR's field holds at most 262143
 * (tar-stream writes 777777 for anything larger: a sandbox uid of 2^20 or more would land as
 * 262143), so larger ids also go as POSIX PAX `uid`/`gid` records, which Go's archive/tar (Docker's
 * archive API) reads in place of the header's.
 */
export function tarOwner(uid: number, gid: number): TarOwner {
  if (uid <= USTAR_MAX_ID && gid <= USTAR_MAX_ID) return { uid, gid };
  return { uid, gid, pax: { uid: String(uid), gid: String(gid) } };
}

/** Files up to this size are read whole; larger ones are streamed. */
const SMALL_FILE_BYTES = 1024 * 1024;

async function walk(
  root: string,
  rel: string,
  pack: tar.Pack,
  hashes: WorkspaceHashes,
  owner: TarOwner,
  exclude?: ExcludePredicate,
): Promise<void> {
  const names = (await readdir(join(root, rel))).sort();
  for (const name of names) {
    const relPath = rel === "" ? name : `${rel}/${name}`;
    const abs = join(root, relPath);
    const st = await lstat(abs);
    if (exclude?.(st.isDirectory() ? `${relPath}/` : relPath)) continue;
    const base = { name: relPath, mode: st.mode & 0o7777, mtime: st.mtime, ...owner };
    if (st.isDirectory()) {
      await entry(pack, { ...base, type: "directory" });
      await walk(root, relPath, pack, hashes, owner, exclude);
    } else if (st.isSymbolicLink()) {
      const target = await readlink(abs);
      await entry(pack, { ...base, type: "symlink", linkname: target });
      hashes.set(relPath, `link:${target}`);
    } else if (st.isFile() && st.size <= SMALL_FILE_BYTES) {
      // Small files in one read (one thread-pool job instead of a stream's several): claims of
      // pooled sandboxes copy typical workspaces in a few ms.
      const data = await readFile(abs);
      await entry(pack, { ...base, type: "file", size: data.length }, data);
      hashes.set(relPath, createHash("sha256").update(data).digest("hex"));
    } else if (st.isFile()) {
      const hash = st.size > HASH_MAX_FILE_BYTES ? undefined : createHash("sha256");
      const sink = pack.entry({ ...base, type: "file", size: st.size });
      const source = createReadStream(abs);
      if (hash) source.on("data", (chunk) => hash.update(chunk));
      await pipeline(source, sink);
      hashes.set(relPath, hash ? hash.digest("hex") : metaRecord(st.size, st.mtimeMs / 1000));
    }
  }
}

function entry(pack: tar.Pack, header: Partial<Header> & { name: string }, body?: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (err?: Error | null) => (err ? reject(err) : resolve());
    if (body) pack.entry(header, body, done);
    else pack.entry(header, done);
  });
}

/** tar-stream's streamx Pack piped into a Node PassThrough (errors forwarded). */
export function toNodeStream(pack: tar.Pack): PassThrough {
  const out = new PassThrough();
  pack.on("error", (err: Error) => out.destroy(err));
  pack.pipe(out);
  return out;
}
