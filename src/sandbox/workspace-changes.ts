/**
 * `changedPaths`: hashes every file (sha256sum) and symlink (its target) under /workspace inside
 * the sandbox (workspace-hashes.ts's command, run through the sandbox's own SandboxIO: the helper's
 * channel when there is one, so a review costs the engine no exec of its own) and compares with the
 * baseline recorded when the workspace was set up. No Docker here: both backends use it.
 */
import { SandboxError } from "../errors.js";
import type { ExecCommand, ExecOptions, ExecResult } from "./types.js";
import { WORKSPACE_DIR } from "./types.js";
import type { WorkspaceHashes } from "./workspace-copy.js";
import { HASH_COMMAND, HASH_OUTPUT_MAX_BYTES, parseWorkspaceHashes } from "./workspace-hashes.js";

/** A sandbox's exec (Sandbox.exec's shape). */
export type ExecFn = (command: ExecCommand, options?: ExecOptions) => Promise<ExecResult>;

/**
 * Current hashes of the workspace, same shape as the baseline, from HASH_COMMAND run by `exec`
 * in WORKSPACE_DIR. Rejects SandboxError when the command fails, prints a record of neither shape,
 * or prints more than HASH_OUTPUT_MAX_BYTES (256 MiB; a partial list would report files as deleted).
 */
export async function hashWorkspace(exec: ExecFn, signal?: AbortSignal): Promise<WorkspaceHashes> {
  const chunks: Buffer[] = [];
  const stderr: Buffer[] = [];
  let bytes = 0;
  const res = await exec(
    { argv: [...HASH_COMMAND] },
    {
      cwd: WORKSPACE_DIR,
      ...(signal ? { signal } : {}),
      onStdout: (chunk) => {
        bytes += chunk.length;
        if (bytes <= HASH_OUTPUT_MAX_BYTES) chunks.push(chunk);
      },
      onStderr: (chunk) => stderr.push(chunk),
    },
  );
  if (res.exitCode !== 0 || bytes > HASH_OUTPUT_MAX_BYTES) {
    const why =
      bytes > HASH_OUTPUT_MAX_BYTES
        ? `its output passed ${HASH_OUTPUT_MAX_BYTES} bytes`
        : `exit ${res.exitCode}`;
    throw new SandboxError(
      `hashing ${WORKSPACE_DIR} failed (${why}): ${Buffer.concat(stderr).toString("utf8").trim()}`,
    );
  }
  return parseWorkspaceHashes(Buffer.concat(chunks));
}
