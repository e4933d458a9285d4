/**
 * The listed differences between Pi 0.73.1 and warden (docs/pi-fidelity.md). Each is one of:
 * - `safety`: a documented deliberate safety difference;
 * - `wording`: harmless wording kept on purpose;
 * - `pi-bug`: a Pi bug that warden does not copy (its case named in `summary`).
 * A difference is explained when one listed difference explains the whole call (`explains`), or
 * when the listed rewrites (`rewrite`), applied in order, make both texts and the error flags
 * agree. Anything else fails the suite: it is a warden fault to fix.
 */

import type { DiffInput, KnownDifference } from "./difference-types.js";
import { OWN_UID } from "./own-uid.js";

const arg = (d: DiffInput, key: string): unknown => (typeof d.args === "string" ? undefined : d.args[key]);
const both = (d: DiffInput, pi: RegExp, warden: RegExp) =>
  d.piError && d.wardenError && pi.test(d.pi) && warden.test(d.warden);
const lines = (s: string) => s.split("\n");
const sorted = (s: string) => lines(s).sort().join("\n");
const NOTICE = /^\[.*\]$/;
const withoutNotices = (s: string) => lines(s).filter((l) => l !== "" && !NOTICE.test(l));
const notices = (s: string) => lines(s).filter((l) => NOTICE.test(l));
/** Pi's grep / find notice that its result limit was reached. */
const PI_LIMIT_REACHED = /(matches|results) limit reached/;
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*[A-Za-z]`, "g");
const INVALID_NOTE = /\n\n\[\d+ invalid UTF-8 or NUL bytes? replaced with U\+FFFD\]/g;
// Names in the generated workspace: links that resolve outside it, entries Pi's ls cannot stat,
// and files ignored by a .gitignore outside any git repository.
const OUTSIDE_LINKS = /(^|\/)(up-two|link-outside)\/?$/;
const UNSTATABLE = new Set(["dangling-link", "loop-a", "loop-b"]);
const IGNORED_OUTSIDE_GIT =
  /(^|\/)outside\/(ignored\.txt|app\.log|sub\/deeper\.txt)[:-]|^(ignored\.txt|app\.log|sub\/deeper\.txt)[:-]/;

/**
 * grep over a tree with a git repository, where Pi's result limit was reached (its ripgrep also
 * searched .git/, so more matches existed) but warden found fewer: every warden result is Pi's too.
 */
function piLimitFilledInGit(d: DiffInput): boolean {
  if (d.tool !== "grep" || notices(d.warden).length > 0 || !PI_LIMIT_REACHED.test(d.pi)) return false;
  const path = arg(d, "path");
  if (path !== undefined && path !== "." && path !== "repo") return false;
  const piLines = new Set(withoutNotices(d.pi));
  return withoutNotices(d.warden).every((l) => piLines.has(l));
}

/**
 * Pi's limit filled up partly in .git/ while warden, which skips it, found all its results within the
 * limit: the results Pi shows outside .git/ are then an arbitrary subset (its ripgrep / fd walk in
 * parallel, unsorted), and each of them must be one of warden's. `kept` is Pi's text without .git/.
 */
function piSampleOfWarden(d: DiffInput, kept: string[]): boolean {
  if (d.wardenError || notices(d.warden).length > 0) return false;
  if (!PI_LIMIT_REACHED.test(d.pi)) return false;
  const shown = new Set(lines(d.warden));
  return kept.every((l) => l === "" || NOTICE.test(l) || shown.has(l));
}

/** Pi's line counts include the empty "line" after a final newline: one less, as warden counts. */
function piLineCountsMinusOne(text: string): string {
  return (
    text
      // "[1 more lines…]" is only that empty string: without it, the shown text ends with its newline.
      .replace(/\n\n\[1 more lines in file\. Use offset=\d+ to continue\.\]$/, "\n")
      .replace(/\n\n\[Showing lines 1-(\d+) of (\d+)\. Use offset=\d+ to continue\.\]$/, (all, end, total) =>
        Number(total) === Number(end) + 1 ? "\n" : all,
      )
      .replace(/\[(\d+) more lines in file/, (_, n) => `[${Number(n) - 1} more lines in file`)
      .replace(/(Showing lines \d+-\d+ of )(\d+)/, (_, p, n) => `${p}${Number(n) - 1}`)
      .replace(/\((\d+) lines total\)/, (_, n) => `(${Number(n) - 1} lines total)`)
  );
}

export const knownDifferences: KnownDifference[] = [
  // ---- deliberate safety differences ----
  {
    id: "confined-paths",
    kind: "safety",
    summary:
      "Paths are confined to the workspace by their canonical target: a path (or symlink) resolving outside it is refused; Pi reads and lists anything the process can.",
    explains: (d) =>
      d.wardenError && /^Path '.*' resolves to '.*', which is outside the workspace/.test(d.warden),
  },
  {
    id: "outside-links-not-followed",
    kind: "safety",
    summary:
      "ls, find and grep do not follow a symlink that resolves outside the workspace (ls shows it without '/', find omits it with a note).",
    rewrite: (d) =>
      d.tool === "ls" || d.tool === "find" || d.tool === "grep"
        ? {
            pi: lines(d.pi)
              .filter((l) => !OUTSIDE_LINKS.test(l))
              .join("\n"),
            warden: lines(d.warden)
              .filter((l) => !OUTSIDE_LINKS.test(l))
              .join("\n")
              .replace(/\n\n\[\d+ entr(y|ies) omitted: resolved outside the workspace\]$/, ""),
          }
        : d,
  },
  {
    id: "tilde-is-workspace",
    kind: "safety",
    summary:
      "`~` and `~/…` mean /workspace (the sandbox has no other home for tools); Pi expands them to the user's home directory.",
    explains: (d) => typeof arg(d, "path") === "string" && /^~(\/|$)/.test(arg(d, "path") as string),
  },
  OWN_UID,
  {
    id: "timeout-must-be-positive",
    kind: "safety",
    summary:
      "bash `timeout` must be greater than 0: `timeout: 0` (or less) is refused; Pi runs the command without a timeout.",
    explains: (d) => d.tool === "bash" && d.wardenError && /timeout: must be > 0/.test(d.warden),
  },
  {
    id: "json-arguments-refused",
    kind: "safety",
    summary:
      "Arguments that are not valid JSON (truncated or garbled) are refused with a validation error; Pi's provider layer repairs them (parseStreamingJson) and runs what it guessed.",
    explains: (d) =>
      typeof d.args === "string" && d.wardenError && /arguments are not valid JSON/.test(d.warden),
  },
  {
    id: "binary-refused",
    kind: "safety",
    summary:
      "read refuses a binary file (NUL bytes in its first 4 KiB) and suggests bash; Pi returns its bytes decoded as text.",
    explains: (d) => d.tool === "read" && d.wardenError && /it is a binary file/.test(d.warden),
  },
  {
    id: "non-utf8-edit-refused",
    kind: "safety",
    summary:
      "edit refuses a file that is not valid UTF-8 (e.g. Latin-1), whose other bytes a rewrite would destroy; Pi rewrites it with U+FFFD.",
    explains: (d) =>
      d.tool === "edit" && d.wardenError && /is not valid UTF-8 text; edit refuses/.test(d.warden),
  },
  {
    id: "final-newline-counted-as-line",
    kind: "pi-bug",
    summary:
      "Pi counts the empty string after a file's final newline as one more line: read says '[1 more lines in file. Use offset=N…]' and that offset returns nothing, totals are one too high, bash's tail shows '(no output)' for a last line over 50 KB followed by a newline, and grep shows an empty context line after the last one (e.g. read {path: 'one-newline.txt', limit: 1}).",
    explains: (d) => {
      if (d.tool === "read")
        return d.pi === "" && !d.piError && /^Offset \d+ is beyond end of file/.test(d.warden);
      if (d.tool !== "bash") return false;
      if (/^\(no output\)\n\n\[Showing lines (\d+)-\1 of \1/.test(d.pi) && /\[Showing last /.test(d.warden))
        return true;
      const pf = /\[Showing lines (\d+)-(\d+) of (\d+)/.exec(d.pi);
      const wf = /\[Showing lines (\d+)-(\d+) of (\d+)/.exec(d.warden);
      if (!pf || !wf || Number(pf[3]) !== Number(wf[3]) + 1 || Number(pf[1]) !== Number(wf[1]) + 1)
        return false;
      return withoutNotices(d.pi).join("\n") === withoutNotices(d.warden).slice(1).join("\n");
    },
    rewrite: (d) => {
      if (d.tool === "read") return { pi: piLineCountsMinusOne(d.pi), warden: d.warden };
      if (d.tool === "grep" && arg(d, "context") !== undefined) {
        return {
          pi: lines(d.pi)
            .filter((l) => !/^.+-\d+- $/.test(l))
            .join("\n"),
          warden: d.warden,
        };
      }
      return d;
    },
  },
  {
    id: "invalid-utf8-noted",
    kind: "safety",
    summary:
      "Invalid UTF-8 and NUL bytes in read and bash output are replaced with U+FFFD and a note says how many; Pi passes NUL bytes through and says nothing.",
    rewrite: (d) => {
      const pi = d.pi.replaceAll("\u0000", "\ufffd");
      const warden = d.warden.replace(INVALID_NOTE, "");
      // The note is a block of its own: without it, neither text keeps a final newline.
      return warden === d.warden
        ? { pi, warden }
        : { pi: pi.replace(/\n$/, ""), warden: warden.replace(/\n$/, "") };
    },
  },
  {
    id: "ansi-stripped",
    kind: "safety",
    summary: "ANSI escape sequences are stripped from bash output; Pi passes them to the model.",
    rewrite: (d) => (d.tool === "bash" ? { pi: d.pi.replace(ANSI, ""), warden: d.warden } : d),
  },
  {
    id: "bom-hidden",
    kind: "safety",
    summary:
      "read never shows a UTF-8 BOM (edit keeps it in the file); Pi shows it as U+FEFF at the start of line 1.",
    rewrite: (d) => (d.tool === "read" ? { pi: d.pi.replace(/^\ufeff/, ""), warden: d.warden } : d),
  },
  {
    id: "git-dir-skipped",
    kind: "safety",
    summary:
      "find and grep never look inside `.git/` directories; Pi's find (fd --hidden) lists their contents and its grep searches them (so its result limit can fill up there).",
    rewrite: (d) => {
      if (d.tool !== "find" && d.tool !== "grep") return d;
      const kept = lines(d.pi).filter((l) => !/(^|\/)\.git\//.test(l));
      if (kept.length === lines(d.pi).length && !piLimitFilledInGit(d)) return d;
      if (piSampleOfWarden(d, kept)) return { pi: d.warden, warden: d.warden };
      // Results Pi found only inside .git/ also filled its limit: drop that notice with them.
      const pi = notices(d.warden).length === 0 ? kept.filter((l) => !NOTICE.test(l)) : kept;
      const rest = pi.join("\n").trim();
      return { pi: rest === "" ? "No matches found" : rest, warden: d.warden };
    },
  },
  {
    id: "grep-ignores-outside-git",
    kind: "safety",
    summary:
      "grep honours .gitignore files outside a git repository too (as find does); Pi's grep (ripgrep without --no-require-git) searches the files they ignore.",
    rewrite: (d) =>
      d.tool === "grep"
        ? {
            pi: lines(d.pi)
              .filter((l) => !IGNORED_OUTSIDE_GIT.test(l))
              .join("\n"),
            warden: d.warden,
          }
        : d,
  },
  // ---- Pi bugs warden does not copy ----
  {
    id: "limit-below-one-or-fractional",
    kind: "pi-bug",
    summary:
      "A read offset/limit that is fractional, zero or negative, or an ls limit of 0: Pi prints fractional counts ('[1999.5 more lines in file. Use offset=2.5…]'), slices from the end for a negative limit and returns nothing for 0 (ls says '(empty directory)'); warden floors fractions and refuses a limit below 1.",
    explains: (d) => {
      const limit = arg(d, "limit");
      const offset = arg(d, "offset");
      if (d.tool === "ls") return limit === 0 && d.wardenError;
      if (d.tool !== "read") return false;
      const odd = (v: unknown) => typeof v === "number" && !Number.isInteger(v);
      return (typeof limit === "number" && limit < 1 && d.wardenError) || odd(limit) || odd(offset);
    },
  },
  {
    id: "limit-notice-without-more",
    kind: "pi-bug",
    summary:
      "When grep or find finds exactly `limit` results and no more, Pi still says '[N matches limit reached. Use limit=2N for more…]'; warden says so only when more exist (e.g. grep {pattern: 'needle', path: 'src/util.ts', limit: 1}).",
    rewrite: (d) => {
      if ((d.tool !== "grep" && d.tool !== "find") || /limit reached/.test(d.warden)) return d;
      const m =
        /\n\n\[(\d+) (matches|results) limit reached\. Use limit=\d+ for more, or refine pattern\]$/.exec(
          d.pi,
        );
      if (!m || withoutNotices(d.pi).length !== Number(m[1])) return d;
      return { pi: d.pi.slice(0, m.index), warden: d.warden };
    },
  },
  {
    id: "ls-drops-unstatable",
    kind: "pi-bug",
    summary:
      "Pi's ls silently drops entries it cannot stat (a dangling or looping symlink); warden lists them as they are.",
    rewrite: (d) =>
      d.tool === "ls"
        ? {
            pi: d.pi,
            warden: lines(d.warden)
              .filter((l) => !UNSTATABLE.has(l))
              .join("\n"),
          }
        : d,
  },
  {
    id: "write-counts-utf16-units",
    kind: "pi-bug",
    summary:
      "Pi's write reports the content's UTF-16 length as 'bytes' ('Successfully wrote 2 bytes' for 'ü\\n'); warden reports bytes.",
    explains: (d) =>
      d.tool === "write" &&
      /^Successfully wrote \d+ bytes to /.test(d.pi) &&
      d.pi.replace(/\d+ bytes/, "") === d.warden.replace(/\d+ bytes/, ""),
  },
  // ---- harmless wording and ordering kept on purpose ----
  {
    id: "result-order",
    kind: "wording",
    summary:
      "grep and find results are sorted by path; Pi prints them in ripgrep's / fd's parallel traversal order, which varies between runs (with a result limit, Pi's subset is arbitrary too, and may have been filled by results warden never gives, in `.git/` or ignored files: both sides reaching the same limit are compared by that notice).",
    rewrite: (d) => {
      if ((d.tool !== "grep" && d.tool !== "find") || d.piError || d.wardenError) return d;
      const limited = /results? limit reached|matches limit reached/.test(d.warden);
      if (!limited) return { pi: sorted(d.pi), warden: sorted(d.warden) };
      const limit = (s: string) => /\d+ (matches|results) limit reached/.exec(s)?.[0];
      if (limit(d.pi) === limit(d.warden)) return { pi: limit(d.pi)!, warden: limit(d.warden)! };
      const shape = (s: string) => `${withoutNotices(s).length} results; ${limit(s)}`;
      return { pi: shape(d.pi), warden: shape(d.warden) };
    },
  },
  {
    id: "stdout-stderr-interleaving",
    kind: "wording",
    summary:
      "For a command writing to both stdout and stderr, the interleaving of the two pipes is timing-dependent on both sides (compared as sorted lines).",
    rewrite: (d) =>
      d.tool === "bash" && />&2/.test(String(arg(d, "command")))
        ? { pi: sorted(d.pi), warden: sorted(d.warden) }
        : d,
  },
  {
    id: "directory-order",
    kind: "wording",
    summary:
      "Commands that walk directories (`find`, `grep -r`) list entries in the filesystem's directory order, which differs between the two workspaces (compared as sorted lines).",
    rewrite: (d) =>
      d.tool === "bash" && /\bfind\b|\bgrep\b[^|]*\s-\w*r/.test(String(arg(d, "command")))
        ? { pi: sorted(d.pi), warden: sorted(d.warden) }
        : d,
  },
  {
    id: "shell-name",
    kind: "wording",
    summary: "bash's own error messages start with 'bash:' (warden runs `bash -c`); Pi spawns '/bin/bash'.",
    rewrite: (d) =>
      d.tool === "bash" ? { pi: d.pi.replace(/^\/bin\/bash: /gm, "bash: "), warden: d.warden } : d,
  },
  {
    id: "not-found-wording",
    kind: "wording",
    summary:
      "A missing path says 'File not found: <path>' / 'Path not found: <path>' with the path as given; Pi shows Node's error ('ENOENT: no such file or directory, access '/abs/path'', edit: 'Could not edit file: … Error code: ENOENT.', find: fd's 'Search path … is not a directory').",
    explains: (d) =>
      both(
        d,
        /ENOENT|^Path not found: \/|^\[fd error\]: Search path '.*' is not a directory/,
        /^(File|Path) not found: /,
      ),
  },
  {
    id: "directory-wording",
    kind: "wording",
    summary:
      "A directory where a file is expected (or the reverse) names the path and what to do ('Cannot read 'src': it is a directory. Use ls to list it.'); Pi shows Node's EISDIR or fd's error.",
    explains: (d) =>
      both(
        d,
        /^EISDIR: |^\[fd error\]: Search path '.*' is not a directory/,
        /it is a directory|is a directory, not a file|is a directory; write|^Not a directory: /,
      ),
  },
  {
    id: "symlink-loop-wording",
    kind: "wording",
    summary: "A symlink loop says where resolving failed and why (ELOOP); Pi shows Node's ELOOP error.",
    explains: (d) => both(d, /^ELOOP: /, /too many levels of symbolic links \(ELOOP\)/),
  },
  {
    id: "edit-error-hints",
    kind: "wording",
    summary:
      "edit errors add a recovery hint (read the file again and copy oldText exactly; tabs vs spaces) to Pi's message (earendil-works/pi#4430, #8654) and name `edits[i].oldText`; 'No changes made' drops Pi's speculative second sentence; empty oldText and overlap messages are reworded; an empty `edits` list is a schema validation error.",
    explains: (d) =>
      d.tool === "edit" &&
      (both(
        d,
        /^Could not find (the exact text|edits\[\d+\]) in .+\. The old ?[tT]ext must match exactly including all whitespace and newlines\.$/,
        /^Could not find (the exact text|edits\[\d+\]\.oldText) in .+\. The old text must match exactly including all whitespace and newlines\. ./s,
      ) ||
        both(
          d,
          /^No changes made to .+ This might indicate/,
          /^No changes made to .+ The replacement produced identical content\.$/,
        ) ||
        both(d, /^oldText must not be empty in /, /^oldText is empty\. /) ||
        both(
          d,
          /^edits\[\d+\] and edits\[\d+\] overlap in .+ Merge them into one edit or target disjoint regions\.$/,
          /^edits\[\d+\] and edits\[\d+\] overlap in .+ Merge them into one edit, or make their oldText regions disjoint\.$/,
        ) ||
        both(
          d,
          /^Edit tool input is invalid\. edits must contain at least one replacement\.$/,
          /^Validation failed for tool "edit":\n {2}- edits: must not have fewer than 1 items/,
        )),
  },
  {
    id: "validation-wording",
    kind: "wording",
    summary:
      "Validation messages come from warden's TypeBox (1.4): \"must have required property 'x'\" where Pi's (1.1) says 'must have required properties x'.",
    rewrite: (d) => ({
      pi: d.pi.replace(/must have required properties (\w+)/g, "must have required property '$1'"),
      warden: d.warden,
    }),
  },
  {
    id: "grep-error-prefix",
    kind: "wording",
    summary: "A ripgrep error (e.g. a bad regex) is prefixed with 'grep failed: '.",
    rewrite: (d) => (d.tool === "grep" ? { pi: d.pi, warden: d.warden.replace(/^grep failed: /, "") } : d),
  },
];
