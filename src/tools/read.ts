/**
 * The read tool (Pi's read: pi-mono coding-agent core/tools/read.ts). Same schema, limits and
 * footers; differences: paths are confined to the sandbox's roots (resolveToolPath), reads are
 * line ranges inside the sandbox (a 2 GiB file with limit 5 reads a few bytes: public fault 18),
 * binary files are refused with a clear message (public fault 16), a BOM is never shown (fault 10),
 * and the session's own spill files are readable by their handle (`/spill/<name>`, named in bash
 * footers) from the host store.
 */
import { Type } from "typebox";
import { InvalidArgumentError, NotFoundError } from "../errors.js";
import type { ReadFileResult, ReadRange } from "../sandbox/index.js";
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, formatSize } from "../truncate/index.js";
import { omitUndefined, throwIfAborted } from "../util/index.js";
import { detectImageMimeType } from "./image-detect.js";
import { resolveToolPath } from "./paths.js";
import { readImage } from "./read-image.js";
import { existingVariant, measureLine } from "./read-sandbox-file.js";
import {
  firstLineOverLimit,
  formatTextRead,
  type ReadSource,
  type ReadTextDetails,
  textReadRequest,
} from "./read-text.js";
import { isSpillHandle } from "./spill-handle.js";
import type { Tool, ToolContext } from "./types.js";

/** Bytes of the file's start examined for image magic and NUL bytes (the "first chunk"). */
const SNIFF_BYTES = 4096;

const readSchema = Type.Object({
  path: Type.String({ description: "Path to the file to read (relative or absolute)" }),
  offset: Type.Optional(Type.Number({ description: "Line number to start reading from (1-indexed)" })),
  limit: Type.Optional(Type.Number({ description: "Maximum number of lines to read" })),
});

/** details of a read result: text truncation and replacements, or the image's type and size. */
export interface ReadToolDetails extends ReadTextDetails {
  /** True when the path was one of the session's spill files. */
  spill?: boolean;
  image?: { mimeType: string; bytes: number; returned: boolean };
}

/**
 * A spill handle (`/spill/<name>`, named in bash footers) opens the session's own spill file through
 * its SpillStore, by exact name; the store rejects any other path in that namespace (traversal,
 * another session's handle, a file already removed) with NotFoundError, never opening a host or
 * sandbox file for it.
 */
function openSource(path: string, ctx: ToolContext): ReadSource | Promise<ReadSource> {
  const handle = path.startsWith("@") ? path.slice(1) : path;
  if (isSpillHandle(handle)) {
    return { displayPath: handle, isSpill: true, read: (range) => ctx.spill.read(handle, range) };
  }
  return openSandboxSource(path, ctx);
}

/** A confined sandbox file. A failed read is explained by a stat (only on the error path, to save an exec). */
async function openSandboxSource(path: string, ctx: ToolContext): Promise<ReadSource> {
  const { sandbox, signal } = ctx;
  let { canonical } = await resolveToolPath(sandbox, path, omitUndefined({ signal }));
  const read = async (range: ReadRange): Promise<ReadFileResult> => {
    try {
      return await sandbox.readFile(canonical, range, omitUndefined({ signal }));
    } catch (err) {
      const stat = await sandbox.stat(canonical, omitUndefined({ signal })).catch(() => undefined);
      if (stat === null) {
        const variant = await existingVariant(path, ctx);
        if (variant === undefined) throw new NotFoundError(`File not found: ${path}`);
        canonical = variant;
        return sandbox.readFile(canonical, range, omitUndefined({ signal }));
      }
      if (stat?.type === "directory") {
        throw new InvalidArgumentError(`Cannot read '${path}': it is a directory. Use ls to list it.`);
      }
      throw err;
    }
  };
  return { displayPath: path, isSpill: false, read, lineBytes: (line) => measureLine(canonical, line, ctx) };
}

/**
 * The file's first bytes for sniffing: taken from the line read when it starts at line 1 and
 * covers them (one sandbox call for the usual read), else read separately.
 */
async function firstBytes(source: ReadSource, lines: ReadFileResult | undefined): Promise<ReadFileResult> {
  if (lines && lines.data.length >= Math.min(SNIFF_BYTES, lines.totalBytes)) {
    return { data: lines.data.subarray(0, SNIFF_BYTES), totalBytes: lines.totalBytes };
  }
  return source.read({ kind: "bytes", offset: 0, length: SNIFF_BYTES });
}

/** Creates the read tool. Throws (isError result) for missing, outside, directory and binary paths. */
export function createReadTool(): Tool<typeof readSchema, ReadToolDetails | undefined> {
  return {
    name: "read",
    label: "read",
    description:
      "Read the contents of a file. Supports text files and images (jpg, png, gif, webp, bmp). Images are sent as " +
      `attachments. For text files, output is truncated to ${DEFAULT_MAX_LINES} lines or ${DEFAULT_MAX_BYTES / 1024}KB ` +
      "(whichever is hit first). Use offset/limit for large files. When you need the full file, continue with " +
      "offset until complete.",
    parameters: readSchema,
    async execute(_toolCallId, args, ctx) {
      throwIfAborted(ctx.signal);
      const source = await openSource(args.path, ctx);
      const request = textReadRequest(args.offset, args.limit);
      let lines = request.startLine === 1 ? await source.read(request.range) : undefined;
      const head = await firstBytes(source, lines);
      const mimeType = detectImageMimeType(head.data);
      if (mimeType) return readImage(source, mimeType, head.totalBytes, ctx.signal);
      if (head.data.includes(0)) {
        throw new InvalidArgumentError(
          `Cannot read '${args.path}': it is a binary file (${formatSize(head.totalBytes)}, NUL bytes in its first ` +
            `${SNIFF_BYTES} bytes). read returns text and images (png, jpeg, gif, webp, bmp) only; inspect it ` +
            `with bash instead, e.g. 'file ${args.path}' or 'xxd ${args.path} | head'.`,
        );
      }
      throwIfAborted(ctx.signal);
      lines ??= await source.read(request.range);
      const lineBytes = firstLineOverLimit(request, lines)
        ? await source.lineBytes?.(request.startLine)
        : undefined;
      const { text, details } = formatTextRead(source, request, lines, args.offset, lineBytes);
      const spill = source.isSpill ? { spill: true } : undefined;
      const merged = details || spill ? { ...details, ...spill } : undefined;
      return { content: [{ type: "text", text }], details: merged };
    },
  };
}
