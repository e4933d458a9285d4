/**
 * The exclusive lock of a `warden serve` state directory: `<stateDir>/serve.lock`, holding the pid
 * and the process start time of the server that owns the directory. It is taken before anything
 * else touches the state (records, reconcile, uploads), so a second server on the same config
 * fails naming the holder instead of reconciling the live server's containers away.
 *
 * Taking it: the content is written to a private temp file first and then hard-linked to the lock
 * name (link(2) fails with EEXIST when the name exists, and the lock is never seen half-written).
 * An existing lock whose holder is dead (`kill -9`, a crash) or whose pid now belongs to another
 * process (its start time differs, read from /proc/<pid>/stat) is stale: it is renamed aside, and
 * removed only when the renamed file is still the stale one (a rename is atomic; a live lock
 * moved aside by a racing starter is linked back). Released by unlink on shutdown and, synchronously,
 * on process exit.
 */
import { randomBytes } from "node:crypto";
import { linkSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { WardenError } from "../errors.js";

/** The state directory is locked by another live `warden serve` (the CLI exits with this message). */
export class StateDirLockedError extends WardenError {
  constructor(
    readonly stateDir: string,
    readonly holderPid: number,
  ) {
    super(
      "CONFLICT",
      `State directory ${stateDir} is in use by another warden serve (pid ${holderPid} on ${hostname()}). ` +
        "Stop that server first, or give this one its own 'stateDir' in the config.",
    );
  }
}

/** A held lock. `release()` is idempotent. */
export interface StateLock {
  readonly path: string;
  release(): void;
}

interface Holder {
  pid: number;
  /** Process start time in clock ticks since boot (/proc/<pid>/stat field 22); "" when unknown. */
  start: string;
}

/** Start time of `pid` from /proc, or "" when it cannot be read (not Linux, gone). */
export function processStartTime(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? "";
  } catch {
    return "";
  }
}

/** Whether the holder still runs: its pid is alive and, where /proc tells, started at the same time. */
function holderAlive(holder: Holder): boolean {
  try {
    process.kill(holder.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  if (!holder.start) return true;
  const now = processStartTime(holder.pid);
  return now === "" || now === holder.start;
}

function parseHolder(text: string): Holder | null {
  const [pid, start] = text.split("\n");
  const n = Number(pid);
  return Number.isSafeInteger(n) && n > 0 ? { pid: n, start: start ?? "" } : null;
}

function readHolder(path: string): Holder | null | "missing" {
  try {
    return parseHolder(readFileSync(path, "utf8"));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return "missing";
    throw err;
  }
}

/**
 * Takes the lock of `stateDir` (which must exist) for this process. Throws StateDirLockedError
 * when a live process holds it; file-system errors (EACCES, EROFS) are thrown as they are.
 */
export function lockStateDir(stateDir: string): StateLock {
  const path = join(stateDir, "serve.lock");
  // The token tells this lock from another one of the same process (release removes only its own).
  const content = `${process.pid}\n${processStartTime(process.pid)}\n${randomBytes(8).toString("hex")}\n`;
  const tmp = `${path}.${randomBytes(6).toString("hex")}.tmp`;
  writeFileSync(tmp, content, { mode: 0o600 });
  try {
    for (let attempt = 0; attempt < 10; attempt++) {
      try {
        linkSync(tmp, path);
        return held(path, content);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      }
      const holder = readHolder(path);
      if (holder === "missing") continue;
      if (holder && holderAlive(holder)) throw new StateDirLockedError(stateDir, holder.pid);
      removeStale(path, holder);
    }
    throw new StateDirLockedError(stateDir, (readHolder(path) as Holder | null)?.pid ?? 0);
  } finally {
    unlinkSync(tmp);
  }
}

/** Moves a stale lock aside and deletes it; a lock that turned out live is put back. */
function removeStale(path: string, judged: Holder | null): void {
  const aside = `${path}.${randomBytes(6).toString("hex")}.stale`;
  try {
    renameSync(path, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw err;
  }
  const moved = readHolder(aside);
  const same = moved !== "missing" && moved?.pid === judged?.pid && moved?.start === judged?.start;
  if (!same && moved !== "missing" && moved && holderAlive(moved)) {
    try {
      linkSync(aside, path);
    } catch {
      // Another starter took the name meanwhile: that one holds the lock now.
    }
  }
  unlinkSync(aside);
}

function held(path: string, content: string): StateLock {
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    process.off("exit", release);
    try {
      // Only our own lock: never one a later server took after a stale-lock takeover.
      if (readFileSync(path, "utf8") === content) unlinkSync(path);
    } catch {
      // Already gone.
    }
  };
  process.on("exit", release);
  return { path, release };
}
