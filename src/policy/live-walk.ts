/**
 * The sandbox side of live path judgement (live-paths.ts): the entries below a directory as they
 * are now, walked by GNU find in the sandbox, bounded by MAX_WALK_ENTRIES.
 */
import type { Sandbox } from "../sandbox/index.js";

/**
 * One entry a walk found: its absolute path and type as find's `%y` gives it (`f` file, `d`
 * directory, `l` symbolic link, other letters other kinds); for a link, `to` is the type of what
 * it points to (find's `%Y`: `N` when nothing, `L` for a loop).
 */
export interface WalkEntry {
  path: string;
  type: string;
  to?: string;
}

/** More entries below one directory than this and the walk gives up (the judgement stays lexical). */
const MAX_WALK_ENTRIES = 50_000;

/** Escapes fnmatch(3)'s special characters, for find's `-path`. */
function fnmatchEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, "\\$&");
}

/**
 * The entries below the directory `dir` (an absolute, canonical path) in `sandbox`, the directory
 * itself first, links not followed (find -P); without `hidden`, no entry whose name starts with a
 * dot below `dir`, nor anything below such a directory (as rg and fd walk). `[]` when nothing is
 * at `dir` (find prints nothing and fails), only its own entry when it is not a directory; null
 * when the walk fails otherwise (a directory it may not read), finds more than MAX_WALK_ENTRIES
 * or a name that is not UTF-8.
 * Run as `/usr/bin/find` (not looked up on PATH), arguments as argv (no shell).
 */
export async function walkDirectory(
  sandbox: Sandbox,
  dir: string,
  hidden: boolean,
  signal?: AbortSignal,
): Promise<WalkEntry[] | null> {
  const argv = ["/usr/bin/find", "-P", dir];
  if (!hidden) argv.push("(", "!", "-path", fnmatchEscape(dir), "-name", ".*", "-prune", ")", "-o");
  argv.push("-printf", "%y%Y %p\\0");
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  signal?.addEventListener("abort", onAbort, { once: true });
  const chunks: Buffer[] = [];
  let count = 0;
  let over = false;
  try {
    const result = await sandbox.exec(
      { argv },
      {
        signal: stop.signal,
        onStdout: (chunk) => {
          if (over) return;
          for (const byte of chunk) if (byte === 0) count++;
          chunks.push(chunk);
          if (count > MAX_WALK_ENTRIES + 1) {
            over = true;
            stop.abort();
          }
        },
      },
    );
    if (over) return null;
    if (result.exitCode !== 0) return chunks.length === 0 ? [] : null;
  } finally {
    signal?.removeEventListener("abort", onAbort);
  }
  const entries: WalkEntry[] = [];
  let text: string;
  try {
    // A name that is not UTF-8 would be judged (and resolved) as another name: not told live.
    text = new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    return null;
  }
  for (const record of text.split("\0")) {
    if (record === "") continue;
    const [type = "", to = ""] = [record[0], record[1]];
    const path = record.slice(3);
    entries.push(type === "l" ? { path, type, to } : { path, type });
  }
  if (entries.length > 0 && entries[0]?.path !== dir) return null;
  if (entries[0]?.type !== "d" && entries.length > 1) return null;
  return entries;
}
