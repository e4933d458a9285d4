/**
 * `changedPaths`: hashes every file (sha256sum) and symlink (its target) under /workspace inside
 * the container, NUL-separated so any name survives, and compares with the baseline recorded when
 * the workspace was set up.
 */
import type Docker from "dockerode";
import { SandboxError } from "../errors.js";
import { captureExec } from "./docker-exec/index.js";
import { WORKSPACE_DIR, type WorkspaceChange } from "./types.js";
import type { WorkspaceHashes } from "./workspace-copy.js";

// Output: for files "F<sha256>  <path>\0"-like records from sha256sum -z, for links "L<path>\0<target>\0".
const HASH_SCRIPT = [
  "cd /workspace || exit 1",
  "find . -type l -printf 'L%P\\0%l\\0'",
  "find . -type f -printf '%P\\0' | xargs -0 -r sha256sum -z --",
].join("\n");

/** Current hashes of the workspace, same shape as the baseline. */
export async function hashWorkspace(
  container: Docker.Container,
  signal?: AbortSignal,
): Promise<WorkspaceHashes> {
  const res = await captureExec(container, ["sh", "-c", HASH_SCRIPT], {
    signal,
    maxStdoutBytes: 256 * 1024 * 1024,
  });
  if (res.exitCode !== 0 || res.stdoutTruncated) {
    throw new SandboxError(`hashing ${WORKSPACE_DIR} failed (exit ${res.exitCode}): ${res.stderr.trim()}`);
  }
  const hashes: WorkspaceHashes = new Map();
  const parts = res.stdout.toString("utf8").split("\0");
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
