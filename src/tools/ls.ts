/**
 * The ls tool (Pi's ls: pi-mono coding-agent core/tools/ls.ts): entries including dotfiles,
 * sorted case-insensitively, "/" after directories (symlinks to directories too, as Pi's stat
 * does, but only when the link's target is inside the sandbox's roots, and for the first 16 links
 * only: each costs sandbox calls), "(empty directory)",
 * 500 entries by default, 50 KiB cap, and Pi's notices. Unlike Pi, the path is confined. The
 * sandbox sorts and cuts the listing (Sandbox.listDirSorted: off the event loop when large) and
 * carries only the shown head, so a directory of 400,000 names costs this thread 500 of them.
 */
import { posix } from "node:path";
import { Type } from "typebox";
import { InvalidArgumentError, NotFoundError } from "../errors.js";
import type { DirEntry, Sandbox } from "../sandbox/index.js";
import { DEFAULT_MAX_BYTES, type TruncationResult } from "../truncate/index.js";
import { omitUndefined, throwIfAborted } from "../util/index.js";
import { listingTruncation } from "./ls-lines.js";
import { bytesLimitNotice, countLimitNotice, ResultNotices } from "./output-notice.js";
import { isWithinRoots, statToolPath } from "./paths.js";
import type { Tool } from "./types.js";

/** Symlinks followed to decide the "/" suffix, per listing (each costs two sandbox calls). */
export const MAX_RESOLVED_SYMLINKS = 16;

/** Pi's default entry limit. */
const LS_DEFAULT_LIMIT = 500;

const lsSchema = Type.Object({
  path: Type.Optional(Type.String({ description: "Directory to list (default: current directory)" })),
  limit: Type.Optional(Type.Number({ description: "Maximum number of entries to return (default: 500)" })),
});

/** details of an ls result (Pi's LsToolDetails). */
export interface LsToolDetails {
  truncation?: TruncationResult;
  /** The entry limit, when it cut the listing. */
  entryLimitReached?: number;
}

/** True when `entry` (in `dir`) is a directory, following a symlink only to a target inside the roots. */
async function isDirectory(
  sandbox: Sandbox,
  dir: string,
  entry: DirEntry,
  signal?: AbortSignal,
): Promise<boolean> {
  if (entry.type === "directory") return true;
  if (entry.type !== "symlink") return false;
  try {
    const target = await sandbox.realpath(posix.join(dir, entry.name), omitUndefined({ signal }));
    if (!isWithinRoots(target, sandbox.info.roots)) return false;
    return (await sandbox.stat(target, omitUndefined({ signal })))?.type === "directory";
  } catch {
    return false;
  }
}

/** Creates the ls tool. Throws (isError result) for a missing, outside or non-directory path. */
export function createLsTool(): Tool<typeof lsSchema, LsToolDetails | undefined> {
  return {
    name: "ls",
    label: "ls",
    description:
      "List directory contents. Returns entries sorted alphabetically, with '/' suffix for directories. Includes " +
      `dotfiles. Output is truncated to ${LS_DEFAULT_LIMIT} entries or ${DEFAULT_MAX_BYTES / 1024}KB (whichever is ` +
      "hit first).",
    parameters: lsSchema,
    async execute(_toolCallId, args, ctx) {
      const { sandbox, signal } = ctx;
      throwIfAborted(signal);
      const limit = args.limit === undefined ? LS_DEFAULT_LIMIT : Math.floor(args.limit);
      if (!(limit >= 1)) throw new InvalidArgumentError(`limit must be at least 1 entry, got ${args.limit}.`);
      const shownPath = args.path || ".";
      const { requested, canonical, stat } = await statToolPath(sandbox, shownPath, signal);
      if (!stat) throw new NotFoundError(`Path not found: ${requested}`);
      if (stat.type !== "directory") throw new InvalidArgumentError(`Not a directory: ${requested}`);
      const { total, head, rest } = await sandbox.listDirSorted(
        canonical,
        { first: limit, headBytes: DEFAULT_MAX_BYTES, maxSymlinks: MAX_RESOLVED_SYMLINKS },
        omitUndefined({ signal }),
      );
      // Each symlink costs two sandbox calls; resolve the first few (of all shown), in parallel, and no more.
      let links = 0;
      const resolve = (entry: DirEntry) =>
        entry.type === "symlink" && links++ >= MAX_RESOLVED_SYMLINKS
          ? false
          : isDirectory(sandbox, canonical, entry, signal);
      const isDir = await Promise.all([...head, ...rest.symlinks].map(resolve));
      const restLinkDirs = isDir.slice(head.length);
      const lines = head.map((entry, i) => (isDir[i] ? `${entry.name}/` : entry.name));
      if (lines.length === 0)
        return { content: [{ type: "text", text: "(empty directory)" }], details: undefined };
      const truncation = listingTruncation(lines.join("\n"), rest, restLinkDirs);
      const notices = new ResultNotices<LsToolDetails>();
      if (total > limit) {
        notices.note(countLimitNotice(limit, "entries", false), { entryLimitReached: limit });
      }
      if (truncation.truncated) notices.note(bytesLimitNotice(DEFAULT_MAX_BYTES), { truncation });
      return notices.output(truncation.content);
    },
  };
}
