/**
 * `changedPaths`: hashes every file (sha256sum) and symlink (its target) under /workspace inside
 * the container (workspace-hashes.ts, through docker exec here) and compares with the baseline
 * recorded when the workspace was set up.
 */
import type Docker from "dockerode";
import { SandboxError } from "../errors.js";
import { captureExec } from "./docker-exec/index.js";
import { WORKSPACE_DIR } from "./types.js";
import type { WorkspaceHashes } from "./workspace-copy.js";
import { HASH_OUTPUT_MAX_BYTES, HASH_SCRIPT, parseWorkspaceHashes } from "./workspace-hashes.js";

/** Current hashes of the workspace, same shape as the baseline. */
export async function hashWorkspace(
  container: Docker.Container,
  signal?: AbortSignal,
): Promise<WorkspaceHashes> {
  const res = await captureExec(container, ["sh", "-c", HASH_SCRIPT], {
    signal,
    maxStdoutBytes: HASH_OUTPUT_MAX_BYTES,
  });
  if (res.exitCode !== 0 || res.stdoutTruncated) {
    throw new SandboxError(`hashing ${WORKSPACE_DIR} failed (exit ${res.exitCode}): ${res.stderr.trim()}`);
  }
  return parseWorkspaceHashes(res.stdout);
}
