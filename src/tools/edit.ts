/**
 * The edit tool: Pi's `edit {path, edits: [{oldText, newText}]}` (coding-agent edit.ts, see
 * shared/reference/pi-tool-semantics.md), run against the sandbox. Matching is the pure module
 * edit-match.ts; this file does the I/O (read and atomic write through the Sandbox) and words errors.
 * Unlike Pi: the path is confined (resolveToolPath), invalid UTF-8 files are refused instead of being
 * rewritten with U+FFFD, a fuzzy match never rewrites text outside the matched span, and not-found
 * errors carry a recovery hint (earendil-works/pi#4430, #8654).
 */
import { Type } from "typebox";
import { InvalidArgumentError, NotFoundError } from "../errors.js";
import { omitUndefined, throwIfAborted } from "../util/index.js";
import { prepareEditArguments } from "./edit-arguments.js";
import { buildEditDiff } from "./edit-diff.js";
import { describeEditFailure } from "./edit-errors.js";
import { applyEdits } from "./edit-match.js";
import { statToolPath } from "./paths.js";
import type { Tool } from "./types.js";

const editSchema = Type.Object({
  path: Type.String({ description: "Path to the file to edit (relative or absolute)" }),
  edits: Type.Array(
    Type.Object(
      {
        oldText: Type.String({
          description:
            "Exact text to replace. It must occur exactly once in the original file and must not overlap " +
            "any other edit's oldText in the same call.",
        }),
        newText: Type.String({ description: "Replacement text, written exactly as given." }),
      },
      // Pi 0.73.1's entries allow nothing else: a stray property is a validation error, not ignored.
      { additionalProperties: false },
    ),
    {
      minItems: 1,
      description:
        "One or more replacements. Each is matched against the original file, not after the other edits. " +
        "If two changes touch the same lines, merge them into one edit.",
    },
  ),
});

/** Details of a successful edit, for UIs and logs. */
export interface EditToolDetails {
  /** Display diff in Pi's shape (line numbers, 4 context lines). */
  diff: string;
  /** Unified patch of the change (LF line endings, no BOM). */
  patch: string;
  /** 1-based line of the first change in the new file. */
  firstChangedLine: number | undefined;
  /** Indexes of the edits that matched only fuzzily (quotes, dashes, spaces, trailing blanks). */
  fuzzyEdits: number[];
}

/** Largest file edit reads and rewrites in one call, in bytes (16 MiB). */
const MAX_EDIT_FILE_BYTES = 16 * 1024 * 1024;

/**
 * Most work one edit call may do on the controller's event loop: each entry of `edits` scans the
 * whole file (to find its oldText and check it occurs once), so the number of entries times the
 * file's size is bounded (512 MiB: 32 entries on a 16 MiB file, 512 on a 1 MiB one). Without it,
 * 1,000 entries on a 14 MiB file held the event loop for 12 s, stalling every other session.
 */
export const MAX_EDIT_SCAN_BYTES = 512 * 1024 * 1024;

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Creates the edit tool. Errors: NotFoundError (no such file), PathOutsideWorkspaceError (canonical
 * target outside the roots), InvalidArgumentError (directory, too large, not UTF-8, empty oldText,
 * not found, ambiguous with its count, overlapping edits, no change).
 */
export function createEditTool(): Tool<typeof editSchema, EditToolDetails> {
  return {
    name: "edit",
    label: "edit",
    description:
      "Edit a single file using exact text replacement. Every edits[].oldText must match a unique, " +
      "non-overlapping region of the original file. If two changes affect the same block or nearby lines, " +
      "merge them into one edit instead of emitting overlapping edits. Do not include large unchanged " +
      "regions just to connect distant changes.",
    parameters: editSchema,
    prepareArguments: prepareEditArguments,
    mutatesPath: (args) => args.path,
    async execute(_toolCallId, args, ctx) {
      const { sandbox, signal } = ctx;
      const { canonical, stat } = await statToolPath(sandbox, args.path, signal);
      if (!stat) throw new NotFoundError(`File not found: ${args.path}`);
      if (stat.type !== "file") {
        throw new InvalidArgumentError(
          `${args.path} is a ${stat.type}, not a file; edit changes regular files.`,
        );
      }
      if (stat.size > MAX_EDIT_FILE_BYTES) {
        throw new InvalidArgumentError(
          `${args.path} is ${stat.size} bytes; edit handles files up to ${MAX_EDIT_FILE_BYTES} bytes. ` +
            "Use bash (sed, python3) for larger files.",
        );
      }
      if (args.edits.length * stat.size > MAX_EDIT_SCAN_BYTES) {
        const most = Math.max(1, Math.floor(MAX_EDIT_SCAN_BYTES / Math.max(1, stat.size)));
        throw new InvalidArgumentError(
          `${args.edits.length} edits of ${args.path} (${stat.size} bytes) is more than one edit call may check: ` +
            `at most ${most} edits for a file this size (edits × file size <= ${MAX_EDIT_SCAN_BYTES} bytes). ` +
            "Split them into several edit calls; nothing was changed.",
        );
      }
      const read = await sandbox.readFile(
        canonical,
        { kind: "bytes", offset: 0, length: stat.size },
        omitUndefined({ signal }),
      );
      let original: string;
      try {
        original = utf8.decode(read.data);
      } catch {
        throw new InvalidArgumentError(
          `${args.path} is not valid UTF-8 text; edit refuses to rewrite it because bytes would be lost. ` +
            "Use bash for binary or non-UTF-8 files.",
        );
      }
      const result = applyEdits(original, args.edits);
      if (!result.ok)
        throw new InvalidArgumentError(describeEditFailure(result.failure, args.path, args.edits.length));
      throwIfAborted(signal);
      await sandbox.writeFile(canonical, Buffer.from(result.text, "utf8"), omitUndefined({ signal }));
      const { diff, patch, firstChangedLine } = await buildEditDiff(args.path, result.oldLf, result.newLf);
      return {
        // Pi 0.73.1's wording (0.58 said "replaced text").
        content: [
          { type: "text", text: `Successfully replaced ${args.edits.length} block(s) in ${args.path}.` },
        ],
        details: {
          diff,
          patch,
          firstChangedLine,
          fuzzyEdits: result.matches.filter((m) => m.fuzzy).map((m) => m.index),
        },
      };
    },
  };
}
