/**
 * The find tool: Pi's `find {pattern, path?, limit?}` (coding-agent find.ts, see
 * shared/reference/pi-tool-semantics.md) on fd `--glob --hidden`, run inside the sandbox. Paths are
 * relative POSIX paths under the search directory, directories end with "/". A .gitignore above the
 * search directory is not applied (`--no-ignore-parent`, earendil-works/pi#5960); the search
 * directory's own and nested .gitignore files apply also outside a git repository
 * (`--no-require-git`, as Pi 0.73.1; needs fd >= 8.7, which the sandbox image has). `.git` is skipped. Results are
 * sorted (Pi leaves fd's parallel order) so the output is stable.
 * Unlike Pi (public-faults case 4): patterns that climb out are refused, fd never follows symlinks,
 * and every returned path is resolved inside the sandbox after expansion; one that lands outside the
 * workspace and mounts (a symlink leading out) is dropped.
 */
import { posix } from "node:path";
import { Type } from "typebox";
import { InvalidArgumentError, NotFoundError } from "../errors.js";
import { formatSize } from "../truncate/index.js";
import { omitUndefined } from "../util/index.js";
import { assertPatternConfined, fdGlob } from "./find-pattern.js";
import { type ByteCapDetails, bytesLimitNotice, countLimitNotice, ResultNotices } from "./output-notice.js";
import { isWithinRoots, statToolPath } from "./paths.js";
import { displaySearchPath, SEARCH_MAX_BYTES } from "./search-common.js";
import { realpathMany, runSearchCommand } from "./search-exec.js";
import type { Tool } from "./types.js";

const findSchema = Type.Object({
  pattern: Type.String({
    description: "Glob pattern to match files, e.g. '*.ts', '**/*.json', or 'src/**/*.spec.ts'",
  }),
  path: Type.Optional(Type.String({ description: "Directory to search in (default: current directory)" })),
  limit: Type.Optional(Type.Number({ description: "Maximum number of results (default: 1000)" })),
});

/** Details of a find, present only when something was cut or dropped. */
export interface FindToolDetails extends ByteCapDetails {
  /** The result limit, when more results existed. */
  resultLimitReached?: number;
  /** Entries dropped because they resolve outside the workspace and mounts. */
  droppedOutside?: number;
  /** FIND_MAX_COLLECTED_BYTES, when the search stopped there (the paths found so far are shown). */
  collectedBytesLimitReached?: number;
}

/** Default result limit (Pi's). */
const FIND_DEFAULT_LIMIT = 1000;

/**
 * Most bytes of paths one find collects on the controller (8 MiB) before it stops the search,
 * whatever `limit` says: paths are sorted and resolved before the 50 KiB cap applies, so without it
 * a large `limit` over many long paths held them all in the controller's memory (100,000 paths of
 * 3.8 KB took 1.7 GB). The default limit's 1,000 paths of at most 4 KiB (PATH_MAX) stay under it.
 */
export const FIND_MAX_COLLECTED_BYTES = 8 * 1024 * 1024;

/**
 * fd's argv; `maxResults` includes one extra result to tell whether the limit was reached.
 * `legacyIgnoreFile` is for an fd older than 8.7 (an image warden did not build): no
 * `--no-require-git`; the search directory's own .gitignore (a path, or null) given as `--ignore-file`.
 */
function buildFdArgv(
  pattern: string,
  searchDir: string,
  maxResults: number,
  legacyIgnoreFile?: string | null,
): string[] {
  const { glob, fullPath } = fdGlob(pattern);
  // One search thread: fd starts one per host CPU (it does not see the container's CPU quota), and
  // each thread counts against pids.max, whose budget is 3 per concurrent call (sandbox/limits.ts).
  const argv = ["fd", "--glob", "--color=never", "--hidden", "--no-ignore-parent", "--threads=1"];
  if (legacyIgnoreFile === undefined) argv.push("--no-require-git");
  argv.push("--exclude", ".git", "--print0", "--max-results", String(maxResults));
  if (fullPath) argv.push("--full-path");
  if (legacyIgnoreFile) argv.push("--ignore-file", legacyIgnoreFile);
  argv.push("--", glob, searchDir);
  return argv;
}

/** True when fd refused `--no-require-git` (fd < 8.7). */
const fdTooOld = (stderr: string) =>
  /--no-require-git/.test(stderr) && /unexpected|wasn't expected/.test(stderr);

/**
 * Creates the find tool. Errors: InvalidArgumentError (pattern climbs out, path not a directory,
 * fd refused the glob), PathOutsideWorkspaceError, NotFoundError (no such path).
 */
export function createFindTool(): Tool<typeof findSchema, FindToolDetails | undefined> {
  return {
    name: "find",
    label: "find",
    description:
      "Search for files by glob pattern. Returns matching file paths relative to the search directory. " +
      `Respects .gitignore. Output is truncated to ${FIND_DEFAULT_LIMIT} results or ${SEARCH_MAX_BYTES / 1024}KB ` +
      "(whichever is hit first).",
    parameters: findSchema,
    async execute(_toolCallId, args, ctx) {
      const { sandbox, signal } = ctx;
      assertPatternConfined(args.pattern);
      const { canonical, stat } = await statToolPath(sandbox, args.path ?? ".", signal);
      if (!stat) throw new NotFoundError(`Path not found: ${args.path ?? "."}`);
      if (stat.type !== "directory") throw new InvalidArgumentError(`Not a directory: ${args.path}`);
      const limit = Math.max(1, Math.floor(args.limit ?? FIND_DEFAULT_LIMIT));

      const records: string[] = [];
      let collectedBytes = 0;
      const search = (argv: string[]) =>
        runSearchCommand(sandbox, argv, {
          separator: 0x00,
          maxRecordBytes: 64 * 1024,
          onRecord: (record) => {
            records.push(record);
            collectedBytes += Buffer.byteLength(record, "utf8");
            return records.length > limit || collectedBytes > FIND_MAX_COLLECTED_BYTES ? "stop" : "continue";
          },
          ...omitUndefined({ signal }),
        });
      let run = await search(buildFdArgv(args.pattern, canonical, limit + 1));
      if (run.exitCode !== 0 && records.length === 0 && fdTooOld(run.stderr)) {
        // An older fd: the search directory's own .gitignore still applies (nested ones only in a repository).
        const gitignore = posix.join(canonical, ".gitignore");
        const own =
          (await sandbox.stat(gitignore, omitUndefined({ signal })))?.type === "file" ? gitignore : null;
        run = await search(buildFdArgv(args.pattern, canonical, limit + 1, own));
      }
      if (run.exitCode !== 0 && !run.stopped && records.length === 0) {
        throw new InvalidArgumentError(
          `find failed: ${run.stderr.trim() || `fd exited with code ${run.exitCode}`}`,
        );
      }

      const limitReached = records.length > limit;
      const entries = await confine(records.slice(0, limit), canonical, sandbox.info.roots, (paths) =>
        realpathMany(sandbox, paths, signal),
      );
      const dropped = Math.min(records.length, limit) - entries.length;
      const { text, cut } = capBytes(entries.sort(), SEARCH_MAX_BYTES);
      const notices = new ResultNotices<FindToolDetails>();
      if (limitReached) {
        notices.note(countLimitNotice(limit, "results", true), { resultLimitReached: limit });
      }
      if (cut) notices.note(bytesLimitNotice(SEARCH_MAX_BYTES), { bytesLimitReached: true });
      if (collectedBytes > FIND_MAX_COLLECTED_BYTES && !limitReached) {
        notices.note(
          `Search stopped after ${formatSize(FIND_MAX_COLLECTED_BYTES)} of paths (${records.length} results); refine pattern or use a smaller limit`,
          { collectedBytesLimitReached: FIND_MAX_COLLECTED_BYTES },
        );
      }
      if (dropped > 0) {
        notices.note(
          `${dropped} ${dropped === 1 ? "entry" : "entries"} omitted: resolved outside the workspace`,
          { droppedOutside: dropped },
        );
      }
      return notices.output(entries.length > 0 ? text : "No files found matching pattern");
    },
  };
}

/**
 * Display paths of fd's records (absolute; directories end with "/") that lie under `searchDir`
 * and whose canonical target (for non-directories, resolved by `resolve`) is within `roots`.
 */
async function confine(
  records: readonly string[],
  searchDir: string,
  roots: readonly string[],
  resolve: (paths: string[]) => Promise<string[]>,
): Promise<string[]> {
  const shown: { rel: string; abs: string; dir: boolean }[] = [];
  for (const record of records) {
    const dir = record.endsWith("/");
    const abs = posix.resolve(searchDir, dir ? record.slice(0, -1) : record);
    const rel = displaySearchPath(abs, searchDir, true, roots);
    if (rel !== null) shown.push({ rel, abs, dir });
  }
  // fd lists a symlink without following it; its target decides whether it may be shown.
  const files = shown.filter((e) => !e.dir);
  const targets = files.length > 0 ? await resolve(files.map((e) => e.abs)) : [];
  const outside = new Set(files.filter((_, i) => !isWithinRoots(targets[i]!, roots)).map((e) => e.abs));
  return shown.filter((e) => !outside.has(e.abs)).map((e) => (e.dir ? `${e.rel}/` : e.rel));
}

/** Joins `lines` with newlines, keeping whole lines within `maxBytes`. */
function capBytes(lines: readonly string[], maxBytes: number): { text: string; cut: boolean } {
  let bytes = 0;
  let n = 0;
  for (const line of lines) {
    const size = Buffer.byteLength(line, "utf8") + (n > 0 ? 1 : 0);
    if (bytes + size > maxBytes) break;
    bytes += size;
    n++;
  }
  return { text: lines.slice(0, n).join("\n"), cut: n < lines.length };
}
