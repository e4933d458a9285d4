/**
 * The workspace's content hashes, pure part: the command that prints them inside a sandbox (any
 * I/O path runs it: workspace-changes.ts, through the sandbox's own SandboxIO) and the parser of
 * its output. Output records: symlinks as "L<path>\0<target>\0", files over HASH_MAX_FILE_BYTES as
 * "S<path>\0<size> <mtime>\0" (find's %s and %T@), other files as sha256sum -z prints them
 * ("<64 hex>  ./<path>\0", the name unescaped), so any name survives.
 */
import { SandboxError } from "../errors.js";
import { WORKSPACE_DIR, type WorkspaceChange } from "./types.js";

/**
 * Relative path (POSIX, no leading "./") to sha256 hex of its content, `link:<target>` for a
 * symlink, or `meta:<size>:<mtime s>` for a file over HASH_MAX_FILE_BYTES.
 */
export type WorkspaceHashes = Map<string, string>;

/**
 * Files larger than this (apparent size, bytes: 16 MiB) are compared by size and modification
 * time (whole seconds), not by a sha256 of their content: hashing a 50 GB sparse file read 50 GB of
 * zeros, and a review never finished (issue 37). Both sides keep it: HASH_COMMAND here, the host
 * baseline in workspace-copy.ts (metaRecord).
 */
export const HASH_MAX_FILE_BYTES = 16 * 1024 * 1024;

/**
 * The record of a file over HASH_MAX_FILE_BYTES: `meta:<size>:<mtime, whole seconds>`. Whole
 * seconds because a copy's tar headers keep no more (tar-stream, the helper's untar, Docker's archive).
 */
export function metaRecord(sizeBytes: number, mtimeSeconds: number): string {
  return `meta:${sizeBytes}:${Math.floor(mtimeSeconds)}`;
}

/**
 * The command (argv, run with /workspace as its working directory) that prints every symlink's
 * target, every large file's size and mtime (over HASH_MAX_FILE_BYTES) and every other file's
 * sha256 under it: one `find` that prints the links itself and hands the
 * files to `sha256sum` in batches (`-exec … +`), so a review starts two processes, not the five of a
 * `sh -c 'find …; find … | xargs sha256sum'` (issue 11: a GET /changes every ~100 ms kept A's
 * sandbox busy starting them). The two write to one pipe without mixing records: GNU find flushes
 * its output before it starts the command and waits for it (findutils, find/exec.c `launch`).
 * find exits non-zero when sha256sum failed for any batch (a file vanished or unreadable).
 */
export const HASH_COMMAND: readonly string[] = [
  "find",
  ".",
  "(",
  "-type",
  "l",
  "-printf",
  "L%P\\0%l\\0",
  ")",
  "-o",
  "(",
  "-type",
  "f",
  "-size",
  `+${HASH_MAX_FILE_BYTES}c`,
  "-printf",
  "S%P\\0%s %T@\\0",
  ")",
  "-o",
  "(",
  "-type",
  "f",
  "-exec",
  "sha256sum",
  "-z",
  "--",
  "{}",
  "+",
  ")",
];

/** Most bytes of HASH_COMMAND output read (256 MiB); more is an error, not a partial answer. */
export const HASH_OUTPUT_MAX_BYTES = 256 * 1024 * 1024;

/**
 * Parses HASH_COMMAND's output: path (relative, no "./") → sha256 hex, or `link:<target>` for a
 * symlink. Throws SandboxError on a record of neither shape (never a partial map: a file missing
 * from it would be reported deleted).
 */
export function parseWorkspaceHashes(output: Buffer): WorkspaceHashes {
  const hashes: WorkspaceHashes = new Map();
  const parts = output.toString("utf8").split("\0");
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] ?? "";
    if (part === "") continue;
    if (part.startsWith("L")) {
      hashes.set(part.slice(1), `link:${parts[i + 1] ?? ""}`);
      i++;
    } else if (part.startsWith("S")) {
      // A hash record starts with lower-case hex: never "L" or "S".
      const [size, mtime] = (parts[i + 1] ?? "").split(" ").map(Number);
      if (size === undefined || mtime === undefined || !Number.isFinite(size) || !Number.isFinite(mtime)) {
        throw new SandboxError(
          `hashing ${WORKSPACE_DIR} printed a size record that is not '<size> <mtime>': ${JSON.stringify((parts[i + 1] ?? "").slice(0, 100))}`,
        );
      }
      hashes.set(part.slice(1), metaRecord(size, mtime));
      i++;
    } else if (part.startsWith("  ./", 64)) {
      // sha256sum -z: "<64 hex>  ./<name>" (two spaces, find's "./" prefix, name unescaped).
      hashes.set(part.slice(68), part.slice(0, 64));
    } else {
      throw new SandboxError(
        `hashing ${WORKSPACE_DIR} printed a record that is neither a file nor a link: ${JSON.stringify(part.slice(0, 100))}`,
      );
    }
  }
  return hashes;
}

/** Differences between `before` and `after`, sorted by path (code-point order). */
export function diffHashes(before: WorkspaceHashes, after: WorkspaceHashes): WorkspaceChange[] {
  const changes: WorkspaceChange[] = [];
  for (const [path, hash] of after) {
    const old = before.get(path);
    if (old === undefined) changes.push({ path, kind: "added" });
    else if (old !== hash) changes.push({ path, kind: "modified" });
  }
  for (const path of before.keys()) if (!after.has(path)) changes.push({ path, kind: "deleted" });
  return changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
