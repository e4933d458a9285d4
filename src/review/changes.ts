/**
 * The change a run made, file by file: `Sandbox.changedPaths()` plus each file's bytes in the sandbox
 * (new) and on the host (old). A symlink on either side is carried as a link, by its target text (as
 * git does: mode 120000, the content is the target), never read through: the host side is read with
 * host-read.ts (no link followed, not even a parent directory). A link made or changed in the sandbox
 * and other non-regular entries are never applied; a host link the sandbox replaced by a regular
 * file, or deleted, is (apply-rule.ts).
 */
import type { FileHandle } from "node:fs/promises";
import { InvalidArgumentError } from "../errors.js";
import { type Sandbox, WORKSPACE_DIR, type WorkspaceChange } from "../sandbox/index.js";
import { omitUndefined } from "../util/index.js";
import { withHostEntry } from "./host-read.js";
import { type HostBase, type HostSnapshot, hashHostPath } from "./host-snapshot.js";

/** The session-start state: snapshotHost's hashes and the bytes it kept (see HostBase). */
export interface SessionBase {
  snapshot: HostSnapshot;
  bytes: HostBase;
}

/** Largest file the review reads, in bytes (64 MiB). */
const MAX_REVIEW_FILE_BYTES = 64 * 1024 * 1024;

/**
 * One changed path. `oldBytes` is the host side (null when absent, not known, or neither a regular
 * file nor a link); `newBytes` the sandbox side (null when deleted or neither a file nor a link).
 * For a link (`oldLink` / `newLink`) the bytes are its target text. `mode` is the sandbox file's
 * permission bits. `special` names an entry the review shows but never applies: "symlink" when
 * the sandbox side is a link (made, or changed), or another type on either side ("directory",
 * "other"), which carries no bytes. A host link the sandbox replaced by a regular file or deleted
 * has `oldLink` and no `special`: applying it replaces or removes the link itself (apply-rule.ts).
 * `oversize` marks a change with a side over the read limit (collectChanges' `oversize: "mark"`):
 * that side is present but its bytes are empty (not read); the patch shows it as binary, apply skips it.
 */
export interface FileChange {
  path: string;
  kind: WorkspaceChange["kind"];
  oldBytes: Buffer | null;
  newBytes: Buffer | null;
  oldLink?: true;
  newLink?: true;
  mode?: number;
  special?: string;
  oversize?: true;
}

/** One side of a change as read. */
interface Side {
  bytes: Buffer | null;
  link?: true;
  mode?: number;
  special?: string;
  oversize?: true;
}

/** The read bounds of one collectChanges call; `leftBytes` is what maxTotalBytes still allows. */
interface ReadLimits {
  maxFileBytes: number;
  maxTotalBytes: number;
  leftBytes: number;
  oversize: "error" | "mark";
}

function tooLarge(where: string, path: string, size: number, limits: ReadLimits): Side {
  if (limits.oversize === "mark") return { bytes: Buffer.alloc(0), oversize: true };
  const over =
    size > limits.maxFileBytes
      ? `over the review limit of ${limits.maxFileBytes}`
      : `over what is left (${limits.leftBytes}) of the review's total limit of ${limits.maxTotalBytes}`;
  throw new InvalidArgumentError(`${where} file ${path} is ${size} bytes, ${over}.`);
}

/** Takes `size` bytes from the bounds: the over-limit Side when they do not allow them, else null. */
function take(where: string, path: string, size: number, limits: ReadLimits): Side | null {
  if (size > limits.maxFileBytes || size > limits.leftBytes) return tooLarge(where, path, size, limits);
  limits.leftBytes -= size;
  return null;
}

/** The first `size` bytes of an open host file (it may have grown since its stat). */
async function readPrefix(handle: FileHandle, size: number): Promise<Buffer> {
  const data = Buffer.alloc(size);
  let done = 0;
  while (done < size) {
    const { bytesRead } = await handle.read(data, done, size - done, done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return data.subarray(0, done);
}

async function readHost(root: string, path: string, limits: ReadLimits): Promise<Side> {
  return withHostEntry(root, path, async (entry): Promise<Side> => {
    if (entry.type === "absent") return { bytes: null };
    if (entry.type === "other") return { bytes: null, special: "other" };
    if (entry.type === "symlink") return { bytes: Buffer.from(entry.target), link: true };
    return take("Host", path, entry.size, limits) ?? { bytes: await readPrefix(entry.handle, entry.size) };
  });
}

async function readSandboxLink(sandbox: Pick<Sandbox, "exec">, full: string, signal?: AbortSignal) {
  const chunks: Buffer[] = [];
  const res = await sandbox.exec(
    { argv: ["readlink", "-n", "--", full] },
    { onStdout: (c) => chunks.push(c), timeoutMs: 30_000, ...(signal ? { signal } : {}) },
  );
  if (res.exitCode !== 0) throw new InvalidArgumentError(`Reading the sandbox link ${full} failed.`);
  return Buffer.concat(chunks);
}

async function readSandbox(
  sandbox: Pick<Sandbox, "stat" | "readFile" | "exec">,
  path: string,
  limits: ReadLimits,
  signal?: AbortSignal,
): Promise<Side> {
  const full = `${WORKSPACE_DIR}/${path}`;
  const stat = await sandbox.stat(full, omitUndefined({ signal }));
  if (!stat) return { bytes: null };
  if (stat.type === "symlink") return { bytes: await readSandboxLink(sandbox, full, signal), link: true };
  if (stat.type !== "file") return { bytes: null, special: stat.type };
  const over = take("Sandbox", path, stat.size, limits);
  if (over) return over;
  const read = await sandbox.readFile(
    full,
    { kind: "bytes", offset: 0, length: stat.size },
    omitUndefined({ signal }),
  );
  return { bytes: read.data, mode: stat.mode };
}

/**
 * The old side from the session-start state: a link by its target, a file by its kept bytes; when
 * the bytes were not kept (over the snapshot's budget) the host is read if it still has the same
 * hash, else the side is marked oversize (shown, never applied).
 */
async function readBase(root: string, path: string, base: SessionBase, limits: ReadLimits): Promise<Side> {
  const hash = base.snapshot.get(path);
  if (hash === undefined) return { bytes: null };
  if (hash.startsWith("link:")) return { bytes: Buffer.from(hash.slice(5)), link: true };
  const kept = base.bytes.get(path);
  if (kept) return { bytes: kept };
  if ((await hashHostPath(root, path)) === hash) return readHost(root, path, limits);
  return { bytes: Buffer.alloc(0), oversize: true };
}

/**
 * Collects the changes of a copy-mode sandbox against the host workspace `hostRoot` (undefined: the
 * original is not available, every old side is null). With `base`, the old side is the workspace as
 * the session started (so a host edit made meanwhile never shows as the session reverting it);
 * without, the host as it is now. A file over `maxFileBytes` (default MAX_REVIEW_FILE_BYTES), or one
 * whose bytes would take all the sides read together (host and sandbox, in path order) over
 * `maxTotalBytes` (default unbounded; the server bounds its memory with it), rejects
 * InvalidArgumentError naming the limit, or with `oversize: "mark"` is marked `oversize` without
 * bytes. A host file is read up to its size when opened. Rejects with the sandbox's errors otherwise.
 */
export async function collectChanges(
  sandbox: Pick<Sandbox, "changedPaths" | "stat" | "readFile" | "exec">,
  hostRoot: string | undefined,
  options: {
    signal?: AbortSignal;
    maxFileBytes?: number;
    maxTotalBytes?: number;
    oversize?: "error" | "mark";
    base?: SessionBase;
  } = {},
): Promise<FileChange[]> {
  const maxTotalBytes = options.maxTotalBytes ?? Number.POSITIVE_INFINITY;
  const limits: ReadLimits = {
    maxFileBytes: options.maxFileBytes ?? MAX_REVIEW_FILE_BYTES,
    maxTotalBytes,
    leftBytes: maxTotalBytes,
    oversize: options.oversize ?? "error",
  };
  const changes: FileChange[] = [];
  for (const { path, kind } of await sandbox.changedPaths(omitUndefined({ signal: options.signal }))) {
    const host =
      hostRoot === undefined
        ? { bytes: null }
        : options.base
          ? await readBase(hostRoot, path, options.base, limits)
          : await readHost(hostRoot, path, limits);
    const inSandbox: Side =
      kind === "deleted" ? { bytes: null } : await readSandbox(sandbox, path, limits, options.signal);
    const change: FileChange = { path, kind, oldBytes: host.bytes, newBytes: inSandbox.bytes };
    if (host.link) change.oldLink = true;
    if (inSandbox.link) change.newLink = true;
    if (inSandbox.mode !== undefined) change.mode = inSandbox.mode;
    const special = inSandbox.special ?? host.special ?? (inSandbox.link ? "symlink" : undefined);
    if (special) change.special = special;
    if (host.oversize || inSandbox.oversize) change.oversize = true;
    changes.push(change);
  }
  return changes;
}
