/**
 * The workspace's content hashes, pure part: the script that prints them inside a sandbox (any
 * I/O path runs it: workspace-changes.ts, through the sandbox's own SandboxIO) and the
 * parser of its output. Output records: files as sha256sum -z prints them ("<64 hex>  <path>\0"),
 * symlinks as "L<path>\0<target>\0", so any name survives.
 */
import type { WorkspaceChange } from "./types.js";
import type { WorkspaceHashes } from "./workspace-copy.js";

/** The shell script (sh -c) that prints every file's sha256 and every symlink's target under /workspace. */
export const HASH_SCRIPT = [
  "cd /workspace || exit 1",
  "find . -type l -printf 'L%P\\0%l\\0'",
  "find . -type f -printf '%P\\0' | xargs -0 -r sha256sum -z --",
].join("\n");

/** Most bytes of HASH_SCRIPT output read (256 MiB); more is an error, not a partial answer. */
export const HASH_OUTPUT_MAX_BYTES = 256 * 1024 * 1024;

/** Parses HASH_SCRIPT's output: path → sha256 hex, or `link:<target>` for a symlink. */
export function parseWorkspaceHashes(output: Buffer): WorkspaceHashes {
  const hashes: WorkspaceHashes = new Map();
  const parts = output.toString("utf8").split("\0");
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] ?? "";
    if (part === "") continue;
    if (part.startsWith("L")) {
      hashes.set(part.slice(1), `link:${parts[i + 1] ?? ""}`);
      i++;
    } else {
      // sha256sum -z: "<64 hex>  <name>" (two spaces, name unescaped).
      hashes.set(part.slice(66), part.slice(0, 64));
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
