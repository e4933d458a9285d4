/**
 * Three-way merge of a session's change onto the host as it is now, file by file, as git merges:
 * base = the file when the session started, ours = the host now, theirs = the session's result.
 * Host unchanged: the session's file. Session and host agree: nothing to do. Both changed a text
 * file: `git merge-file` (git must be on PATH); overlapping edits are a conflict. Anything else where
 * both sides changed (binary, deleted on one side, added on both, a link on the host) is a conflict.
 * A base that was a host link (`baseLink`: the session replaced it by a file, or deleted it) is
 * compared as a link, by its target text: the host still has that link, so the session's side is
 * taken; anything else there is a conflict unless it is already the session's side. A conflict
 * never loses a host edit: the caller writes nothing when any file conflicts.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { WardenError } from "../errors.js";
import { withHostEntry } from "./host-read.js";
import { isBinary } from "./patch.js";

const run = promisify(execFile);

/**
 * One file to merge: the base (null: absent at the start) and the session's result (null: deleted,
 * else a regular file's bytes). `baseLink`: the base was a link and `base` is its target text.
 */
export interface MergeInput {
  path: string;
  base: Buffer | null;
  theirs: Buffer | null;
  baseLink?: boolean;
}

/** The host side now: absent (null), a regular file's bytes, a link's target, or another entry. */
type Ours = Buffer | null | { link: string } | { other: string };

/** The outcome for one file: the bytes to write (null: delete), "same" when nothing is to be done, or a conflict. */
export type MergeOutcome =
  | { path: string; kind: "write"; bytes: Buffer | null; merged: boolean }
  | { path: string; kind: "same" }
  | { path: string; kind: "conflict"; reason: string };

/** git is needed for a text merge and is not on PATH. */
class GitMissingError extends WardenError {
  constructor(detail: string) {
    super(
      "COMMAND_FAILED",
      `Merging a session's change onto host files edited meanwhile needs git on PATH (${detail}). Install git, or apply the patch by hand.`,
    );
  }
}

function same(a: Buffer | null, b: Buffer | null): boolean {
  return a === null || b === null ? a === b : a.equals(b);
}

async function readOurs(root: string, path: string): Promise<Ours> {
  return withHostEntry(root, path, async (entry): Promise<Ours> => {
    if (entry.type === "absent") return null;
    if (entry.type === "file") return entry.handle.readFile();
    if (entry.type === "symlink") return { link: entry.target };
    return { other: "not a regular file" };
  });
}

/** The merge of a base that was a host link `target` (see module doc). */
function mergeOverLink(path: string, ours: Ours, target: Buffer, theirs: Buffer | null): MergeOutcome {
  if (ours !== null && !Buffer.isBuffer(ours) && "link" in ours && Buffer.from(ours.link).equals(target))
    return { path, kind: "write", bytes: theirs, merged: false };
  if ((ours === null || Buffer.isBuffer(ours)) && same(ours, theirs)) return { path, kind: "same" };
  return {
    path,
    kind: "conflict",
    reason:
      "was a symlink when the session started and changed on the host since (the session replaced or deleted it)",
  };
}

/** `git merge-file -p`: the merged text, or the number of conflicting hunks. */
async function mergeText(ours: Buffer, base: Buffer, theirs: Buffer): Promise<Buffer | number> {
  const dir = await mkdtemp(join(tmpdir(), "warden-merge-"));
  try {
    const files = ["ours", "base", "theirs"].map((n) => join(dir, n));
    await Promise.all([ours, base, theirs].map((b, i) => writeFile(files[i]!, b)));
    const labels = ["-L", "host", "-L", "session start", "-L", "session"];
    try {
      const { stdout } = await run("git", ["merge-file", "-p", ...labels, ...files], {
        encoding: "buffer",
        maxBuffer: 1024 * 1024 * 1024,
      });
      return stdout;
    } catch (err) {
      const e = err as NodeJS.ErrnoException & { code?: unknown };
      if (e.code === "ENOENT") throw new GitMissingError("spawn git: ENOENT");
      if (typeof e.code === "number" && e.code > 0 && e.code < 128) return e.code;
      throw err;
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Merges one file (see module doc). Rejects GitMissingError, or an fs error reading the host. */
export async function mergeFile(root: string, input: MergeInput): Promise<MergeOutcome> {
  const { path, base, theirs } = input;
  const ours = await readOurs(root, path);
  if (input.baseLink && base !== null) return mergeOverLink(path, ours, base, theirs);
  if (ours !== null && !Buffer.isBuffer(ours))
    return {
      path,
      kind: "conflict",
      reason: `is ${"link" in ours ? "a symlink" : ours.other} on the host now`,
    };
  if (same(ours, base))
    return same(ours, theirs)
      ? { path, kind: "same" }
      : { path, kind: "write", bytes: theirs, merged: false };
  if (same(ours, theirs)) return { path, kind: "same" };
  if (base === null)
    return { path, kind: "conflict", reason: "added on the host and in the session, differently" };
  if (ours === null) return { path, kind: "conflict", reason: "deleted on the host, changed in the session" };
  if (theirs === null)
    return { path, kind: "conflict", reason: "changed on the host, deleted in the session" };
  if (isBinary(ours) || isBinary(base) || isBinary(theirs))
    return { path, kind: "conflict", reason: "binary file changed on the host and in the session" };
  const merged = await mergeText(ours, base, theirs);
  if (typeof merged === "number")
    return {
      path,
      kind: "conflict",
      reason: `${merged} conflicting hunk${merged === 1 ? "" : "s"}: the host and the session changed the same or adjacent lines (a three-way merge, as git's, keeps only changes with an unchanged line between them)`,
    };
  return { path, kind: "write", bytes: merged, merged: true };
}
