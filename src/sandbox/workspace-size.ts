/**
 * Checks, before anything is copied, that a copy-mode workspace fits its limit: the host directory's
 * files (minus what is excluded) are sized as the sandbox's workspace filesystem stores them (whole
 * 4 KiB pages per file and directory, as tmpfs does), and a workspace over `limits.workspaceBytes` is
 * refused with an error naming the limit and how to raise it, instead of the copy failing midway
 * with "no space left on device".
 */
import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";
import { InvalidArgumentError } from "../errors.js";
import { formatSize } from "../truncate/index.js";
import type { ExcludePredicate } from "./workspace-exclude.js";

const PAGE_BYTES = 4096;

const pages = (bytes: number) => Math.ceil(bytes / PAGE_BYTES) * PAGE_BYTES;

/** Bytes `hostDir` takes in the sandbox's workspace (see module doc), and its file count. Links are not followed. */
export async function measureWorkspace(
  hostDir: string,
  exclude?: ExcludePredicate,
): Promise<{ bytes: number; files: number }> {
  let bytes = 0;
  let files = 0;
  const walk = async (rel: string): Promise<void> => {
    for (const name of await readdir(join(hostDir, rel))) {
      const relPath = rel === "" ? name : `${rel}/${name}`;
      const st = await lstat(join(hostDir, relPath));
      if (exclude?.(st.isDirectory() ? `${relPath}/` : relPath)) continue;
      if (st.isDirectory()) {
        bytes += PAGE_BYTES;
        await walk(relPath);
      } else if (st.isFile()) {
        bytes += pages(st.size);
        files++;
      }
    }
  };
  await walk("");
  return { bytes, files };
}

/**
 * The error for a host read of workspace `hostDir` that failed (ENOENT, EACCES, ENAMETOOLONG…): it is
 * about the directory, never the engine, so it is an InvalidArgumentError naming the directory.
 */
export function workspaceReadError(hostDir: string, err: Error): InvalidArgumentError {
  return new InvalidArgumentError(
    `workspace.hostPath ${hostDir} could not be read (${err.message}); it may have changed while it was read, send the request again.`,
  );
}

/**
 * Throws InvalidArgumentError when `hostDir` does not fit `limitBytes` (see module doc), or when it
 * cannot be read (workspaceReadError).
 */
export async function requireWorkspaceFits(
  hostDir: string,
  limitBytes: number,
  exclude?: ExcludePredicate,
): Promise<void> {
  const { bytes, files } = await measureWorkspace(hostDir, exclude).catch((err: Error) => {
    throw workspaceReadError(hostDir, err);
  });
  if (bytes <= limitBytes) return;
  throw new InvalidArgumentError(
    `The workspace ${hostDir} takes about ${formatSize(bytes)} in the sandbox (${files} files), over the copy-mode workspace limit of ${formatSize(limitBytes)} ` +
      `(limits.workspaceBytes; CLI: --workspace-size). Raise the limit, leave large paths out (--exclude, .wardenignore), or use --mode ro. Nothing was copied.`,
  );
}
