/**
 * The file descriptor table of one command of a bash script, so that `/dev/stdout`, `/dev/stderr`,
 * `/dev/stdin`, `/dev/fd/N` and `/proc/self/fd/N` (`/proc/thread-self/fd/N`) mean what they mean
 * to the command that opens them: the command's own descriptor N as the script's redirections left
 * it, never the descriptors of warden's helper (which resolves other paths, sandbox.realpath).
 *
 * Linux, not bash, opens these names (bash 5.2 built for Linux has /dev/fd and /dev/stdin, so its
 * own emulation is off): /dev/fd is a link to /proc/self/fd, and opening /proc/self/fd/N opens the
 * file descriptor N holds *anew*, with the access of the new open. So `echo x 1<notes.txt
 * >/dev/stdout` writes notes.txt though fd 1 was opened for reading (checked in the sandbox:
 * test/engine/policy/dev-fd.test.ts). A name that reaches a file is judged as that file, with the
 * access of the reference; one that reaches a stream is judged by the stream's name, never resolved.
 *
 * What a descriptor holds when the script did not set it: a tool call's bash starts with fd 0 on
 * /dev/null and fds 1 and 2 on the tool result (src/sandbox: stdin is always /dev/null), and no
 * other descriptor open (the helper passes none; an open of /dev/fd/3 then fails). Where the
 * script may have changed a descriptor out of the analysis' sight (`exec`, `source`, a `{var}`
 * redirection, inside a function whose caller may redirect it), the descriptor is unknown and a
 * reference to it is opaque.
 */
import { posix } from "node:path";
import { WORKSPACE } from "./arguments.js";

/** What one descriptor of a command holds. */
export type FdEntry =
  /** A stream that is not a file of the sandbox, judged by `name`: the tool's own stdin (/dev/null), the tool result (/dev/stdout, /dev/stderr), a pipe or here-document of the script (/dev/stdout when written, /dev/stdin when read). */
  | { kind: "stream"; name: string }
  /** The file an earlier redirection opened: its target as written (relative to the working directory). */
  | { kind: "file"; target: string }
  /** Not open: opening /dev/fd/N fails. */
  | { kind: "closed" }
  /** The script may have set it where the analysis cannot follow; `why` says how. */
  | { kind: "unknown"; why: string };

/** A command's descriptors: `fds` as set, `other` for every descriptor not listed. */
export interface FdTable {
  readonly fds: ReadonlyMap<number, FdEntry>;
  readonly other: FdEntry;
}

/** The tool's own streams: a top-level command of a bash tool call starts with these. */
export const TOOL_STREAMS: FdTable = {
  fds: new Map<number, FdEntry>([
    [0, { kind: "stream", name: "/dev/null" }],
    [1, { kind: "stream", name: "/dev/stdout" }],
    [2, { kind: "stream", name: "/dev/stderr" }],
  ]),
  other: { kind: "closed" },
};

/** A table every descriptor of which is unknown, for `why`. */
export function unknownFds(why: string): FdTable {
  return { fds: new Map(), other: { kind: "unknown", why } };
}

/** What descriptor `fd` holds in `table`. */
function fdEntry(table: FdTable, fd: number): FdEntry {
  return table.fds.get(fd) ?? table.other;
}

/** `table` with descriptor `fd` set to `entry`. */
export function withFd(table: FdTable, fd: number, entry: FdEntry): FdTable {
  const fds = new Map(table.fds);
  fds.set(fd, entry);
  return { fds, other: table.other };
}

/** A pipe written by the command (its stdout, or stdout and stderr for `|&`). */
export const PIPE_OUT: FdEntry = { kind: "stream", name: "/dev/stdout" };
/** A pipe, here-document or here-string the command reads. */
export const PIPE_IN: FdEntry = { kind: "stream", name: "/dev/stdin" };

/** One redirection, as bash applies it (left to right, before the command runs). */
export type Redirection =
  /** `n>f`, `n>>f`, `n>|f`, `n<f`; `both` for `&>f`, `&>>f`, `>&f`: fds 1 and 2. `target` null: not literal. */
  | { op: "open"; fd: number; target: string | null; both?: boolean }
  /** `n>&m`, `n<&m`; `move` for `n>&m-` (m is closed after). */
  | { op: "dup"; fd: number; from: number; move?: boolean }
  /** `n>&-`, `n<&-`. */
  | { op: "close"; fd: number }
  /** A here-document, here-string or `<(…)` on fd n; `out`: a `>(…)` the command writes. */
  | { op: "feed"; fd: number; out?: boolean };

/** What a path a command opens names, once its descriptors are taken into account. */
export type Resolved =
  /** An ordinary path (or the file a descriptor holds, plus the rest of the name): resolved and judged as any path. */
  | { kind: "path"; target: string }
  /** A stream, judged by this name and never resolved in the sandbox. */
  | { kind: "stream"; target: string; entry: FdEntry }
  /** What the name reaches cannot be told. */
  | { kind: "opaque"; why: string };

/** A name that reaches a descriptor of the command itself: its number and the rest of the name. */
interface OwnFd {
  fd: number;
  rest: string;
}

const STD_NAMES: Record<string, number> = { stdin: 0, stdout: 1, stderr: 2 };
/** A prefix that follows a descriptor (`/dev/fd/3`, `/proc/1/fd/3`, `/dev/stdout`), as in bash. */
const LINK_PREFIX = /(^|\/)(dev\/(fd\/\d+|std(in|out|err))|proc\/[^/]+\/(task\/[^/]+\/)?fd\/[^/]+)(\/|$)/;

/**
 * Classifies `raw` (a literal path as the command opens it, relative to /workspace): a descriptor of
 * the command itself (`own`), the descriptor directory (`dir`), another process's descriptor or a
 * `..` after a descriptor (`opaque`), or an ordinary path (null).
 */
function classify(raw: string): { own: OwnFd } | { dir: true } | { opaque: string } | null {
  // `..` after a descriptor climbs from whatever the descriptor holds, not from /dev/fd: look for
  // one in the name as written (only `//` and `.` removed), before `..` is resolved lexically.
  const written = (raw.startsWith("/") ? raw : `${WORKSPACE}/${raw}`)
    .replace(/\/+/g, "/")
    .replace(/\/\.(?=\/|$)/g, "");
  const link = LINK_PREFIX.exec(written);
  if (link && /(^|\/)\.\.(\/|$)/.test(written.slice(link.index + link[0].length - 1)))
    return { opaque: "'..' after a file descriptor link climbs from the file it holds" };
  const abs = posix.resolve(WORKSPACE, raw);
  const std = /^\/dev\/std(in|out|err)(\/.*)?$/.exec(abs);
  if (std) return { own: { fd: STD_NAMES[`std${std[1]}`] as number, rest: std[2] ?? "" } };
  const own = /^\/(?:dev|proc\/(?:self|thread-self))\/fd\/(\d+)(\/.*)?$/.exec(abs);
  if (own) return { own: { fd: Number(own[1]), rest: own[2] ?? "" } };
  if (/^\/(dev|proc\/(self|thread-self))\/fd$/.test(abs)) return { dir: true };
  if (/^\/proc\/[^/]+\/(task\/[^/]+\/)?fd\/[^/]+/.test(abs))
    return { opaque: "another process's file descriptor: the policy cannot tell which file it holds" };
  return null;
}

/** True when `path` (absolute, normalised) names a descriptor of some process (`/proc/14/fd/1`). */
export function isProcessFdPath(path: string): boolean {
  return /^\/proc\/[^/]+\/(task\/[^/]+\/)?fd\/[^/]+/.test(path);
}

/**
 * What the literal path `raw` names for a command whose descriptors are `table` (see module doc):
 * an ordinary path is returned as is; a descriptor name is the stream or file the descriptor holds.
 * `moved` (FdContext.moved): the command runs in another directory than /workspace, where a
 * relative name that would climb to a descriptor link from /workspace (`../dev/stdout`) is an
 * ordinary file, judged nowhere: opaque.
 */
export function resolveFdPath(table: FdTable, raw: string, moved = false): Resolved {
  const c = classify(raw);
  if (c === null) return { kind: "path", target: raw };
  if (moved && !raw.startsWith("/"))
    return { kind: "opaque", why: `${raw}: a relative name of a file descriptor link, in another directory` };
  if ("opaque" in c) return { kind: "opaque", why: `${raw}: ${c.opaque}` };
  if ("dir" in c) return { kind: "stream", target: "/dev/fd", entry: { kind: "stream", name: "/dev/fd" } };
  const { fd, rest } = c.own;
  const entry = fdEntry(table, fd);
  switch (entry.kind) {
    case "stream":
      return { kind: "stream", target: `${entry.name}${rest}`, entry };
    case "closed":
      return { kind: "stream", target: `/dev/fd/${fd}${rest}`, entry };
    case "file":
      return { kind: "path", target: rest === "" ? entry.target : posix.join(entry.target, rest) };
    case "unknown":
      return { kind: "opaque", why: `${raw} names file descriptor ${fd}, which ${entry.why}` };
  }
}

/** The entry a descriptor holds after opening what `resolved` names. */
function opened(resolved: Resolved): FdEntry {
  if (resolved.kind === "path") return { kind: "file", target: resolved.target };
  if (resolved.kind === "stream")
    return resolved.entry.kind === "closed" ? { kind: "closed" } : resolved.entry;
  return { kind: "unknown", why: "was opened on a name the policy cannot follow" };
}

/**
 * Applies one redirection to `table` (bash's order: each sees the descriptors the ones before it
 * left). Returns the new table and, for an `open`, what its target names (judged by the caller as
 * a read or a write). A dup of a closed descriptor fails in bash and the command does not run: the
 * descriptor is left closed here.
 */
export function applyRedirection(table: FdTable, r: Redirection): { table: FdTable; resolved?: Resolved } {
  switch (r.op) {
    case "open": {
      const resolved: Resolved =
        r.target === null
          ? { kind: "opaque", why: "the target is not literal" }
          : resolveFdPath(table, r.target);
      const entry = opened(resolved);
      const next = withFd(table, r.fd, entry);
      return { table: r.both ? withFd(next, 2, entry) : next, resolved };
    }
    case "dup": {
      const next = withFd(table, r.fd, fdEntry(table, r.from));
      return { table: r.move && r.from !== r.fd ? withFd(next, r.from, { kind: "closed" }) : next };
    }
    case "close":
      return { table: withFd(table, r.fd, { kind: "closed" }) };
    case "feed":
      return { table: withFd(table, r.fd, r.out ? PIPE_OUT : PIPE_IN) };
  }
}

/**
 * The descriptors a script starts with, and why its commands' descriptors may differ from what
 * their redirections say (bash/redirects.ts descriptorHazard), or null.
 */
export interface FdContext {
  table: FdTable;
  uncertain: string | null;
  /**
   * The commands run in another directory than the script's (a wrapper's `env -C DIR`): a relative
   * name that would climb to a descriptor link from /workspace (`../dev/stdout`) is a file there.
   */
  moved?: boolean;
}

/**
 * The descriptors of a wrapper's payload that runs in another directory (`env -C DIR cmd 3<x`):
 * a descriptor opened on a relative name before the change is unknown (its name means another
 * file below the new directory).
 */
export function movedFds(table: FdTable): FdTable {
  const why = "was opened on a relative name before the wrapper changed directory";
  const moved = (e: FdEntry): FdEntry =>
    e.kind === "file" && !e.target.startsWith("/") ? { kind: "unknown", why } : e;
  return {
    fds: new Map([...table.fds].map(([fd, e]) => [fd, moved(e)])),
    other: moved(table.other),
  };
}
