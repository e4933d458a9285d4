/**
 * Hashes of the host workspace, taken before the sandbox copies it in, so `--apply` can refuse when
 * the host changed meanwhile. Same shape as the sandbox's baseline: relative POSIX path to the sha256
 * hex of a regular file's content, or `link:<target>` for a symlink (never followed). The host is only read.
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { lstat, readdir, readlink } from "node:fs/promises";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { throwIfAborted } from "../util/abort.js";

/** Relative path -> sha256 hex, or `link:<target>`. */
export type HostSnapshot = Map<string, string>;

/** sha256 hex of a file's bytes, streamed. */
export async function hashFile(path: string, signal?: AbortSignal): Promise<string> {
  const hash = createHash("sha256");
  await pipeline(createReadStream(path), hash, { signal });
  return hash.digest("hex");
}

/**
 * The hash of one host path as the snapshot records it, or undefined when nothing (or something
 * other than a file or symlink) is there.
 */
export async function hashHostPath(absolute: string, signal?: AbortSignal): Promise<string | undefined> {
  const stat = await lstat(absolute).catch(() => undefined);
  if (stat?.isSymbolicLink()) return `link:${await readlink(absolute)}`;
  if (stat?.isFile()) return hashFile(absolute, signal);
  return undefined;
}

/** Walks `root` and hashes every regular file and symlink. Rejects on read errors (EACCES etc.). */
export async function snapshotHost(
  root: string,
  options: { signal?: AbortSignal } = {},
): Promise<HostSnapshot> {
  const snapshot: HostSnapshot = new Map();
  const walk = async (dir: string, prefix: string): Promise<void> => {
    throwIfAborted(options.signal);
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
      const abs = join(dir, entry.name);
      if (entry.isDirectory()) await walk(abs, rel);
      else if (entry.isSymbolicLink()) snapshot.set(rel, `link:${await readlink(abs)}`);
      else if (entry.isFile()) snapshot.set(rel, await hashFile(abs, options.signal));
    }
  };
  await walk(root, "");
  return snapshot;
}
