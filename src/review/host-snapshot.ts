/**
 * Hashes of the host workspace, taken before the sandbox copies it in, so `--apply` can refuse when
 * the host changed meanwhile. Same shape as the sandbox's baseline: relative POSIX path to the sha256
 * hex of a regular file's content, or `link:<target>` for a symlink (never followed). The host is only read.
 */
import { createHash } from "node:crypto";
import type { FileHandle } from "node:fs/promises";
import { pipeline } from "node:stream/promises";
import { throwIfAborted } from "../util/index.js";
import {
  type HostDir,
  listHostDir,
  openChildDir,
  openChildEntry,
  openHostRoot,
  withHostEntry,
} from "./host-read.js";

/** Relative path -> sha256 hex, or `link:<target>`. */
export type HostSnapshot = Map<string, string>;

/**
 * The session-start bytes of regular files (relative path -> bytes), what a session's patch is
 * diffed against and the base of a three-way merge onto the host. Filled by snapshotHost's `base`
 * option up to `maxBaseBytes` in all; a file beyond it has a hash but no bytes kept.
 */
export type HostBase = Map<string, Buffer>;

/** Default bound of the bytes snapshotHost keeps for the base (256 MiB). */
const MAX_BASE_BYTES = 256 * 1024 * 1024;

/** sha256 hex of an open file's bytes, streamed from its start (the handle stays open). */
async function hashHandle(handle: FileHandle, signal?: AbortSignal): Promise<string> {
  const hash = createHash("sha256");
  await pipeline(handle.createReadStream({ start: 0, autoClose: false }), hash, { signal });
  return hash.digest("hex");
}

/**
 * The hash of workspace-relative `path` under `root` as the snapshot records it, or undefined when
 * nothing (or something other than a file or symlink, or something under a linked directory) is there.
 * No link is followed (host-read.ts).
 */
export async function hashHostPath(
  root: string,
  path: string,
  signal?: AbortSignal,
): Promise<string | undefined> {
  return withHostEntry(root, path, async (entry) => {
    if (entry.type === "symlink") return `link:${entry.target}`;
    if (entry.type === "file") return hashHandle(entry.handle, signal);
    return undefined;
  });
}

/**
 * Walks `root` and hashes every regular file and symlink, following no link; with `base`, also keeps
 * each file's bytes there (up to `maxBaseBytes` in all, default MAX_BASE_BYTES). `skip(relPath)`
 * leaves a path out (and everything under a skipped directory). Rejects on read errors (EACCES etc.).
 */
export async function snapshotHost(
  root: string,
  options: {
    signal?: AbortSignal;
    base?: HostBase;
    maxBaseBytes?: number;
    skip?: (relPath: string) => boolean;
  } = {},
): Promise<HostSnapshot> {
  const snapshot: HostSnapshot = new Map();
  let budget = options.maxBaseBytes ?? MAX_BASE_BYTES;
  const walk = async (dir: HostDir, prefix: string): Promise<void> => {
    throwIfAborted(options.signal);
    for (const item of await listHostDir(dir)) {
      const rel = prefix ? `${prefix}/${item.name}` : item.name;
      if (options.skip?.(item.isDirectory() ? `${rel}/` : rel)) continue;
      if (item.isDirectory()) {
        const child = await openChildDir(dir, item.name);
        if (!child) continue;
        try {
          await walk(child, rel);
        } finally {
          await child.handle.close();
        }
        continue;
      }
      const entry = await openChildEntry(dir, item.name);
      if (entry.type === "symlink") snapshot.set(rel, `link:${entry.target}`);
      else if (entry.type === "file") {
        try {
          if (options.base && entry.size <= budget) {
            const bytes = await entry.handle.readFile();
            budget -= bytes.length;
            options.base.set(rel, bytes);
            snapshot.set(rel, createHash("sha256").update(bytes).digest("hex"));
          } else snapshot.set(rel, await hashHandle(entry.handle, options.signal));
        } finally {
          await entry.handle.close();
        }
      }
    }
  };
  const top = await openHostRoot(root);
  try {
    await walk(top, "");
  } finally {
    await top.handle.close();
  }
  return snapshot;
}
