/**
 * The grep tool: Pi's `grep {pattern, path?, glob?, ignoreCase?, literal?, context?, limit?}`
 * (coding-agent grep.ts, see shared/reference/pi-tool-semantics.md) on ripgrep `--json`, run inside
 * the sandbox. Respects .gitignore (also outside a git repository, `--no-require-git`), includes hidden
 * files, skips `.git`, never follows symlinks (no `-L`), sorts by path (Pi does not; stable output). Unlike Pi: the search path is confined, and
 * every path ripgrep returns is checked again after expansion (a path outside the roots is dropped).
 */
import { type Static, Type } from "typebox";
import { InvalidArgumentError, NotFoundError } from "../errors.js";
import { formatSize } from "../truncate/index.js";
import { omitUndefined } from "../util/index.js";
import { GrepCollector } from "./grep-collect.js";
import { type ByteCapDetails, bytesLimitNotice, countLimitNotice, ResultNotices } from "./output-notice.js";
import { statToolPath } from "./paths.js";
import { displaySearchPath, GREP_MAX_LINE_CHARS, SEARCH_MAX_BYTES } from "./search-common.js";
import { runSearchCommand } from "./search-exec.js";
import type { Tool } from "./types.js";

const grepSchema = Type.Object({
  pattern: Type.String({ description: "Search pattern (regex or literal string)" }),
  path: Type.Optional(
    Type.String({ description: "Directory or file to search (default: current directory)" }),
  ),
  glob: Type.Optional(
    Type.String({ description: "Filter files by glob pattern, e.g. '*.ts' or '**/*.spec.ts'" }),
  ),
  ignoreCase: Type.Optional(Type.Boolean({ description: "Case-insensitive search (default: false)" })),
  literal: Type.Optional(
    Type.Boolean({ description: "Treat pattern as literal string instead of regex (default: false)" }),
  ),
  context: Type.Optional(
    Type.Number({ description: "Number of lines to show before and after each match (default: 0)" }),
  ),
  limit: Type.Optional(Type.Number({ description: "Maximum number of matches to return (default: 100)" })),
});

/** Arguments of the grep tool. */
type GrepToolInput = Static<typeof grepSchema>;

/** Details of a grep, present only when a limit applied (as in Pi). */
export interface GrepToolDetails extends ByteCapDetails {
  /** The match limit, when more matches existed. */
  matchLimitReached?: number;
  /** True when some line was cut to 500 characters. */
  linesTruncated?: boolean;
}

/** Default match limit (Pi's). */
const GREP_DEFAULT_LIMIT = 100;

// A JSON event carries a whole line; longer ones (minified files) are dropped, not buffered.
const MAX_EVENT_BYTES = 4 * 1024 * 1024;

/**
 * ripgrep's argv; the pattern always follows `--`. `searchPath` is "." for a directory search (run
 * with the directory as cwd, so globs with "/" match relative to it) or a file's absolute path.
 */
function buildRgArgv(args: GrepToolInput, searchPath: string, context: number): string[] {
  const argv = [
    "rg",
    "--json",
    "--line-number",
    "--color=never",
    "--no-config",
    "--hidden",
    "--no-require-git",
  ];
  // Sorted output (single-threaded rg) keeps results stable between runs and replays.
  argv.push("--sort=path");
  if (args.ignoreCase) argv.push("--ignore-case");
  if (args.literal) argv.push("--fixed-strings");
  if (context > 0) argv.push(`--context=${context}`);
  if (args.glob) argv.push(`--glob=${args.glob}`);
  // After the caller's glob: of two globs that match a path, ripgrep takes the later one, so a glob
  // such as `**` or `{.git,config}` cannot bring `.git` (its config, with remote tokens) back.
  argv.push("--glob=!.git", "--", args.pattern, searchPath);
  return argv;
}

/**
 * Creates the grep tool. Errors: PathOutsideWorkspaceError, NotFoundError (no such path),
 * InvalidArgumentError (ripgrep refused the pattern or glob; its message is included).
 */
export function createGrepTool(): Tool<typeof grepSchema, GrepToolDetails | undefined> {
  return {
    name: "grep",
    label: "grep",
    description:
      "Search file contents for a pattern. Returns matching lines with file paths and line numbers. " +
      `Respects .gitignore. Output is truncated to ${GREP_DEFAULT_LIMIT} matches or ${SEARCH_MAX_BYTES / 1024}KB ` +
      `(whichever is hit first). Long lines are truncated to ${GREP_MAX_LINE_CHARS} chars.`,
    parameters: grepSchema,
    async execute(_toolCallId, args, ctx) {
      const { sandbox, signal } = ctx;
      const { canonical, stat } = await statToolPath(sandbox, args.path ?? ".", signal);
      if (!stat) throw new NotFoundError(`Path not found: ${args.path ?? "."}`);
      const isDir = stat.type === "directory";
      const context = args.context && args.context > 0 ? Math.floor(args.context) : 0;
      const limit = Math.max(1, Math.floor(args.limit ?? GREP_DEFAULT_LIMIT));
      const collector = new GrepCollector({
        limit,
        context,
        displayPath: (abs) => displaySearchPath(abs, canonical, isDir, sandbox.info.roots),
      });
      const run = await runSearchCommand(sandbox, buildRgArgv(args, isDir ? "." : canonical, context), {
        ...(isDir ? { cwd: canonical } : {}),
        separator: 0x0a,
        maxRecordBytes: MAX_EVENT_BYTES,
        onRecord: (line) => collector.accept(line),
        ...omitUndefined({ signal }),
      });
      const found = collector.result();
      // rg: 0 = matches, 1 = none, 2 = error (possibly after some matches, e.g. an unreadable file).
      if (!run.stopped && run.exitCode !== 0 && run.exitCode !== 1 && found.lines.length === 0) {
        throw new InvalidArgumentError(
          `grep failed: ${run.stderr.trim() || `ripgrep exited with code ${run.exitCode}`}`,
        );
      }
      if (found.matchCount === 0)
        return { content: [{ type: "text", text: "No matches found" }], details: undefined };
      const notices = new ResultNotices<GrepToolDetails>();
      if (found.matchLimitReached) {
        notices.note(countLimitNotice(limit, "matches", true), { matchLimitReached: limit });
      }
      if (found.bytesLimitReached) {
        notices.note(bytesLimitNotice(SEARCH_MAX_BYTES), { bytesLimitReached: true });
      }
      if (found.linesTruncated) {
        notices.note(
          `Some lines truncated to ${GREP_MAX_LINE_CHARS} chars. Use read tool to see full lines`,
          {
            linesTruncated: true,
          },
        );
      }
      if (run.droppedRecords > 0) {
        notices.note(
          `${run.droppedRecords} lines over ${formatSize(MAX_EVENT_BYTES)} omitted. Use read tool to see them`,
          { linesTruncated: true },
        );
      }
      return notices.output(found.lines.join("\n"));
    },
  };
}
