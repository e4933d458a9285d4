/**
 * The change a run made, file by file: `Sandbox.changedPaths()` plus each file's bytes in the sandbox
 * (new) and on the host (old). Symlinks and other non-regular files are reported but carry no bytes:
 * they are never read through (a link could point anywhere) and never applied.
 */
import { lstat, readFile } from "node:fs/promises";
import { InvalidArgumentError } from "../errors.js";
import { type Sandbox, WORKSPACE_DIR, type WorkspaceChange } from "../sandbox/types.js";
import { hostPathFor } from "./host-paths.js";

/** Largest file the review reads, in bytes (64 MiB). */
export const MAX_REVIEW_FILE_BYTES = 64 * 1024 * 1024;

/**
 * One changed path. `oldBytes` is the host file (null when absent or not a regular file); `newBytes`
 * the sandbox file (null when deleted or not a regular file). `mode` is the sandbox file's permission bits.
 * `special` names a non-regular entry on either side (e.g. "symlink"), which review shows but never applies.
 */
export interface FileChange {
  path: string;
  kind: WorkspaceChange["kind"];
  oldBytes: Buffer | null;
  newBytes: Buffer | null;
  mode?: number;
  special?: string;
}

async function readHost(root: string, path: string): Promise<{ bytes: Buffer | null; special?: string }> {
  const absolute = hostPathFor(root, path);
  const stat = await lstat(absolute).catch(() => undefined);
  if (!stat) return { bytes: null };
  if (stat.isSymbolicLink()) return { bytes: null, special: "symlink" };
  if (!stat.isFile()) return { bytes: null, special: "other" };
  if (stat.size > MAX_REVIEW_FILE_BYTES) {
    throw new InvalidArgumentError(
      `Host file ${path} is ${stat.size} bytes, over the review limit of ${MAX_REVIEW_FILE_BYTES}.`,
    );
  }
  return { bytes: await readFile(absolute) };
}

async function readSandbox(
  sandbox: Pick<Sandbox, "stat" | "readFile">,
  path: string,
  signal?: AbortSignal,
): Promise<{ bytes: Buffer | null; mode?: number; special?: string }> {
  const full = `${WORKSPACE_DIR}/${path}`;
  const stat = await sandbox.stat(full, { signal });
  if (!stat) return { bytes: null };
  if (stat.type !== "file") return { bytes: null, special: stat.type };
  if (stat.size > MAX_REVIEW_FILE_BYTES) {
    throw new InvalidArgumentError(
      `Sandbox file ${path} is ${stat.size} bytes, over the review limit of ${MAX_REVIEW_FILE_BYTES}.`,
    );
  }
  const read = await sandbox.readFile(full, { kind: "bytes", offset: 0, length: stat.size }, { signal });
  return { bytes: read.data, mode: stat.mode };
}

/**
 * Collects the changes of a copy-mode sandbox against the host workspace `hostRoot`.
 * Rejects with the sandbox's errors, or InvalidArgumentError for a file over MAX_REVIEW_FILE_BYTES.
 */
export async function collectChanges(
  sandbox: Pick<Sandbox, "changedPaths" | "stat" | "readFile">,
  hostRoot: string,
  options: { signal?: AbortSignal } = {},
): Promise<FileChange[]> {
  const changes: FileChange[] = [];
  for (const { path, kind } of await sandbox.changedPaths({ signal: options.signal })) {
    const host = await readHost(hostRoot, path);
    const inSandbox = kind === "deleted" ? { bytes: null } : await readSandbox(sandbox, path, options.signal);
    const change: FileChange = { path, kind, oldBytes: host.bytes, newBytes: inSandbox.bytes };
    if ("mode" in inSandbox && inSandbox.mode !== undefined) change.mode = inSandbox.mode;
    const special = ("special" in inSandbox ? inSandbox.special : undefined) ?? host.special;
    if (special) change.special = special;
    changes.push(change);
  }
  return changes;
}
