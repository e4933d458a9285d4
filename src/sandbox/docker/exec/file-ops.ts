/**
 * File operations inside the sandbox, each one or two short execs of coreutils/findutils so that
 * nothing is loaded whole: byte ranges with `tail -c +N | head -c M`, line ranges with
 * `tail -n +S | head -n L | head -c B` (plus `wc -l` for the total), lstat via `find -printf`, canonical
 * paths via `realpath -m` (symlinks of the existing prefix resolved, the rest appended), and
 * NUL-separated `find -printf` listings (names may contain newlines).
 * `stat`/`ls` are avoided: under gVisor (runsc 2022-12) coreutils' statx calls fail with EINVAL.
 * Scripts exit 44 for "no such file", 45 for "not a directory", 46 for "is a directory".
 */
import type Docker from "dockerode";
import { PermissionDeniedError, SandboxError } from "../../../errors.js";
import { omitUndefined } from "../../../util/index.js";
import {
  checkReadRange,
  containerPath,
  isDirectoryError,
  notDirectoryError,
  notFoundError,
} from "../../io-contract.js";
import { type RawListing, typeOfFindLetter } from "../../listing.js";
import type { FileStat, ReadFileResult, ReadRange } from "../../types.js";
import { type CaptureResult, captureExec } from "./capture.js";

type Opts = { signal?: AbortSignal };

const READ_BYTES = [
  'f=$1; off=$2; len=$3; [ -e "$f" ] || exit 44; [ -d "$f" ] && exit 46',
  'size=$(find -L "$f" -maxdepth 0 -printf %s) || exit 1; printf "%s\\n" "$size"',
  'tail -c +$((off+1)) -- "$f" | head -c "$len"',
].join("\n");

const READ_LINES = [
  'f=$1; start=$2; max=$3; maxb=$4; [ -e "$f" ] || exit 44; [ -d "$f" ] && exit 46',
  'size=$(find -L "$f" -maxdepth 0 -printf %s) || exit 1; n=$(wc -l < "$f") || exit 1',
  'if [ "$size" -gt 0 ] && [ -n "$(tail -c 1 -- "$f")" ]; then n=$((n+1)); fi',
  'printf "%s %s\\n" "$size" "$n"',
  'tail -n +"$start" -- "$f" | head -n "$max" | head -c "$maxb"',
].join("\n");

const STAT = '[ -e "$1" ] || [ -L "$1" ] || exit 44; find "$1" -maxdepth 0 -printf "%y %s %m %T@"';
const LIST =
  '[ -e "$1" ] || exit 44; [ -d "$1" ] || exit 45; find -H "$1" -mindepth 1 -maxdepth 1 -printf "%y%f\\0"';

/** See Sandbox.readFile. totalLines counts newlines, plus one for a final line without one. */
export async function readFileRange(
  container: Docker.Container,
  path: string,
  range: ReadRange,
  opts: Opts = {},
): Promise<ReadFileResult> {
  const p = containerPath(path);
  checkReadRange(range);
  let res: CaptureResult;
  if (range.kind === "bytes") {
    res = await captureExec(
      container,
      ["sh", "-c", READ_BYTES, "read", p, String(range.offset), String(range.length)],
      {
        ...omitUndefined({ signal: opts.signal }),
        maxStdoutBytes: range.length + 64,
      },
    );
  } else {
    const args = [p, String(range.startLine), String(range.maxLines), String(range.maxBytes)];
    res = await captureExec(container, ["sh", "-c", READ_LINES, "read", ...args], {
      ...omitUndefined({ signal: opts.signal }),
      maxStdoutBytes: range.maxBytes + 64,
    });
  }
  checkExit(res, p, "reading");
  const nl = res.stdout.indexOf(0x0a);
  const [size, lines] = res.stdout.subarray(0, nl).toString("ascii").split(" ");
  const result: ReadFileResult = { data: res.stdout.subarray(nl + 1), totalBytes: Number(size) };
  if (lines !== undefined) result.totalLines = Number(lines);
  return result;
}

/** See Sandbox.stat: lstat semantics; null when nothing exists at the path. */
export async function statPath(
  container: Docker.Container,
  path: string,
  opts: Opts = {},
): Promise<FileStat | null> {
  const p = containerPath(path);
  const res = await captureExec(
    container,
    ["sh", "-c", STAT, "stat", p],
    omitUndefined({ signal: opts.signal }),
  );
  if (res.exitCode === 44) return null;
  checkExit(res, p, "stat of");
  const [letter, size, mode, mtime] = res.stdout.toString("utf8").split(" ");
  return {
    type: typeOfFindLetter(letter),
    size: Number(size),
    mode: Number.parseInt(mode ?? "", 8) & 0o7777,
    mtimeMs: Math.round(Number(mtime) * 1000),
  };
}

/** See Sandbox.realpath: `realpath -m` inside the container. */
export async function realPath(container: Docker.Container, path: string, opts: Opts = {}): Promise<string> {
  const p = containerPath(path);
  const res = await captureExec(
    container,
    ["realpath", "-m", "-z", "--", p],
    omitUndefined({ signal: opts.signal }),
  );
  checkExit(res, p, "resolving");
  return res.stdout.subarray(0, res.stdout.length - 1).toString("utf8");
}

/**
 * A directory's `find -printf "%y%f\0"` listing (listing.ts's "find" format), unparsed. Rejects
 * NotFoundError, or InvalidArgumentError when the path is not a directory.
 */
export async function listDirectoryRaw(
  container: Docker.Container,
  path: string,
  opts: Opts = {},
): Promise<RawListing> {
  const p = containerPath(path);
  const res = await captureExec(container, ["sh", "-c", LIST, "ls", p], {
    ...omitUndefined({ signal: opts.signal }),
    maxStdoutBytes: 64 * 1024 * 1024,
  });
  checkExit(res, p, "listing");
  return { format: "find", bytes: res.stdout };
}

/** Throws the warden error for a script's failure exit status. */
export function checkExit(res: CaptureResult, p: string, verb: string): void {
  if (res.exitCode === 0) return;
  if (res.exitCode === 44) throw notFoundError(p);
  if (res.exitCode === 45) throw notDirectoryError(p);
  if (res.exitCode === 46) throw isDirectoryError(p);
  if (res.exitCode === 47) {
    throw new PermissionDeniedError(`${verb} ${p} failed in the sandbox: its directory is not writable.`);
  }
  if (/No such file or directory/.test(res.stderr)) throw notFoundError(p);
  throw new SandboxError(`${verb} ${p} failed (exit ${res.exitCode}): ${res.stderr.trim()}`);
}
