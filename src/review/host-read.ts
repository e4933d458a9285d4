/**
 * Reading the host workspace without ever following a link, neither the last component nor any
 * directory on the way (the workspace may hold links planted by an uploaded tar or an earlier `rw`
 * session, pointing anywhere on the host). Each component is opened with O_NOFOLLOW (plus
 * O_DIRECTORY for directories) relative to the already opened parent, through the parent's
 * `/proc/self/fd/N` entry, which is resolved like openat(2): a component swapped for a link after it
 * was checked cannot redirect the read (Linux). Where /proc is missing, the same opens go by path
 * (O_NOFOLLOW still guards the last component). A link is reported by its target text, never read through.
 */
import { constants, existsSync } from "node:fs";
import { type FileHandle, lstat, open, readdir, readlink, realpath } from "node:fs/promises";
import { join } from "node:path";
import { PathOutsideWorkspaceError } from "../errors.js";
import { hostPathFor } from "./host-paths.js";

const { O_RDONLY, O_NOFOLLOW, O_DIRECTORY, O_NONBLOCK } = constants;
const PROC_FD = existsSync("/proc/self/fd");

/** An open host directory: its handle, and the path of an entry inside it (see childPath). */
export interface HostDir {
  handle: FileHandle;
  path: string;
}

/** What is at a workspace path, seen without following links. A `file` holds an open handle. */
export type HostEntry =
  | { type: "absent" }
  | { type: "other" }
  | { type: "symlink"; target: string }
  | { type: "file"; handle: FileHandle; size: number; mode: number };

/** The path that names `name` inside `dir` (through /proc/self/fd on Linux, so `dir` cannot be swapped). */
export function childPath(dir: HostDir, name: string): string {
  return PROC_FD ? `/proc/self/fd/${dir.handle.fd}/${name}` : join(dir.path, name);
}

/** Opens the workspace root (itself resolved: the root's own path is the caller's, trusted). */
export async function openHostRoot(root: string): Promise<HostDir> {
  const path = await realpath(root);
  return { handle: await open(path, O_RDONLY | O_DIRECTORY), path };
}

/** Opens directory `name` in `dir`; null when it is absent, a link, or not a directory. */
export async function openChildDir(dir: HostDir, name: string): Promise<HostDir | null> {
  try {
    const handle = await open(childPath(dir, name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    return { handle, path: join(dir.path, name) };
  } catch (err) {
    if (isNotThere(err)) return null;
    throw err;
  }
}

/** Looks at entry `name` of `dir`: a link's target, or an open handle on a regular file. */
export async function openChildEntry(dir: HostDir, name: string): Promise<HostEntry> {
  const path = childPath(dir, name);
  const stat = await lstat(path).catch((err: unknown) => {
    if (isNotThere(err)) return undefined;
    throw err;
  });
  if (!stat) return { type: "absent" };
  if (stat.isSymbolicLink()) return { type: "symlink", target: await readlink(path) };
  if (!stat.isFile()) return { type: "other" };
  // O_NONBLOCK: a fifo swapped in after the lstat cannot hang the open; fstat below refuses it.
  const handle = await open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK).catch((err: unknown) => {
    if (isNotThere(err)) return undefined;
    throw err;
  });
  if (!handle) return { type: "absent" };
  const opened = await handle.stat();
  if (!opened.isFile()) {
    await handle.close();
    return { type: "other" };
  }
  return { type: "file", handle, size: opened.size, mode: opened.mode & 0o7777 };
}

/** Lists `dir` (entry types are the entries' own: links are not followed). */
export function listHostDir(dir: HostDir) {
  return readdir(PROC_FD ? `/proc/self/fd/${dir.handle.fd}` : dir.path, { withFileTypes: true });
}

/**
 * Runs `use` on what is at workspace-relative `rel` under `root`, then closes every handle.
 * An intermediate component that is a link or not a directory makes the entry `absent`.
 * Throws PathOutsideWorkspaceError for an absolute or `..` path (hostPathFor).
 */
export async function withHostEntry<T>(
  root: string,
  rel: string,
  use: (entry: HostEntry) => Promise<T>,
): Promise<T> {
  const names = relativeNames(root, rel);
  const last = names.pop()!;
  const opened: HostDir[] = [await openHostRoot(root)];
  try {
    for (const name of names) {
      const next = await openChildDir(opened[opened.length - 1]!, name);
      if (!next) return await use({ type: "absent" });
      opened.push(next);
    }
    const entry = await openChildEntry(opened[opened.length - 1]!, last);
    try {
      return await use(entry);
    } finally {
      if (entry.type === "file") await entry.handle.close();
    }
  } finally {
    await Promise.all(opened.map((d) => d.handle.close()));
  }
}

/**
 * The components of workspace-relative `rel` (non-empty, no "." or ".."). Throws
 * PathOutsideWorkspaceError for an absolute path, one with "..", or the root itself.
 */
export function relativeNames(root: string, rel: string): string[] {
  const names = rel.split("/").filter((n) => n !== "" && n !== ".");
  if (names.includes("..")) throw new PathOutsideWorkspaceError(rel, hostPathFor(root, rel));
  hostPathFor(root, rel);
  return names;
}

function isNotThere(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === "ENOENT" || code === "ELOOP" || code === "ENOTDIR";
}
