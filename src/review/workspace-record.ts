/**
 * Which host directory a saved session patch belongs to, so `warden apply` applies it there and
 * nowhere else. The record is the directory's absolute path plus its identity at session start:
 * the device and inode numbers of the directory itself (lstat: a link in its place is another
 * directory). A directory moved away, or deleted and made again (a fresh clone), keeps no inode at
 * its path, so the check refuses it instead of merging the change into whatever is there now.
 *
 * The record travels in the patch file itself, as its first line, before the first `diff --git`:
 * `warden-workspace: {"path":…,"dev":…,"ino":…}` (JSON; numbers as decimal strings, since a device
 * number may pass 2^53). git apply, like every patch reader, skips text before the first file
 * header (it is where a mail's message goes), so the file stays a plain git patch.
 */
import { lstat } from "node:fs/promises";
import { WardenError } from "../errors.js";

/**
 * A workspace as recorded at session start: absolute path, device and inode, and its birth time in
 * nanoseconds since the epoch where the file system keeps one (statx btime; decimal strings).
 */
export interface WorkspaceRecord {
  path: string;
  dev: string;
  ino: string;
  born?: string;
}

/** The line prefix of the record in a patch file. */
const WORKSPACE_HEADER = "warden-workspace: ";

/**
 * The record of directory `path` (absolute) as it is now. Rejects with the fs error when it
 * cannot be read (ENOENT…).
 */
export async function workspaceRecordOf(path: string): Promise<WorkspaceRecord> {
  const st = await lstat(path, { bigint: true });
  return {
    path,
    dev: String(st.dev),
    ino: String(st.ino),
    ...(st.birthtimeNs > 0n ? { born: String(st.birthtimeNs) } : {}),
  };
}

/**
 * Whether `now` is the directory `recorded` names: same device and inode, and, when both have a
 * birth time, the same one. The birth time matters because a file system hands a freed inode number
 * to the next directory made (ext4 does at once: `rm -r ws && mkdir ws` keeps the number).
 */
function sameWorkspace(recorded: WorkspaceRecord, now: WorkspaceRecord): boolean {
  if (now.dev !== recorded.dev || now.ino !== recorded.ino) return false;
  return recorded.born === undefined || now.born === undefined || recorded.born === now.born;
}

/** "device D, inode I[, made ISO-TIME]": a record's identity, for messages. */
function identityOf(record: WorkspaceRecord): string {
  const made = record.born
    ? `, made ${new Date(Number(BigInt(record.born) / 1_000_000n)).toISOString()}`
    : "";
  return `device ${record.dev}, inode ${record.ino}${made}`;
}

/** The header line (with its newline) that carries `record` in a patch file. */
export function workspaceHeader(record: WorkspaceRecord): string {
  const { path, dev, ino, born } = record;
  return `${WORKSPACE_HEADER}${JSON.stringify({ path, dev, ino, ...(born ? { born } : {}) })}\n`;
}

/**
 * The record in patch text: its header line, read only before the first `diff --git` line (lines
 * split at `\n` only, as git reads them: a `\r` or U+2028 ends no line).
 * Undefined when there is none or it is malformed.
 */
export function readWorkspaceHeader(text: string): WorkspaceRecord | undefined {
  for (const line of text.split("\n")) {
    if (line.startsWith("diff --git ")) break;
    if (!line.startsWith(WORKSPACE_HEADER)) continue;
    try {
      const v = JSON.parse(line.slice(WORKSPACE_HEADER.length)) as Partial<WorkspaceRecord>;
      if (typeof v.path === "string" && typeof v.dev === "string" && typeof v.ino === "string")
        return {
          path: v.path,
          dev: v.dev,
          ino: v.ino,
          ...(typeof v.born === "string" ? { born: v.born } : {}),
        };
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** The CLI command that reads a workspace record: what the error says did not happen, and how to override. */
export type WorkspaceRecordUse = "apply" | "replay";

/**
 * The recorded workspace is gone from its path, or its path now holds another directory (moved,
 * or deleted and made again). Code NOT_FOUND when gone, CONFLICT when another is there; the message
 * names the recorded directory and its identity, what is at the path now, and the override
 * (`warden apply|replay SOURCE --workspace DIR`).
 */
class WorkspaceMovedError extends WardenError {
  constructor(
    readonly recorded: WorkspaceRecord,
    readonly now: WorkspaceRecord | undefined,
    source: string,
    use: WorkspaceRecordUse = "apply",
  ) {
    const was = `${recorded.path} (${identityOf(recorded)})`;
    const is = now
      ? `${now.path} is now another directory (${identityOf(now)}): the one the session copied was moved or replaced`
      : `${recorded.path} is gone`;
    super(
      now ? "CONFLICT" : "NOT_FOUND",
      use === "apply"
        ? `${source} records the workspace ${was}, but ${is}. Nothing was applied. To apply it to another directory, name it: warden apply ${source} --workspace DIR.`
        : `${source} records the workspace ${was}, but ${is}. Nothing ran. To replay it in another directory, name it: warden replay ${source} --workspace DIR.`,
    );
  }
}

/**
 * Checks that `recorded` is still at its path. Rejects WorkspaceMovedError (see it) otherwise;
 * `source` names the patch or transcript in the message, `use` the command that checks.
 */
export async function checkWorkspaceRecord(
  recorded: WorkspaceRecord,
  source: string,
  use: WorkspaceRecordUse = "apply",
): Promise<void> {
  const now = await workspaceRecordOf(recorded.path).catch(() => undefined);
  if (now && sameWorkspace(recorded, now)) return;
  throw new WorkspaceMovedError(recorded, now, source, use);
}
