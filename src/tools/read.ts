/**
 * The read tool (Pi's read: pi-mono coding-agent core/tools/read.ts). Same schema, limits and
 * footers; differences: paths are confined to the sandbox's roots (resolveToolPath), reads are
 * line ranges inside the sandbox (a 2 GiB file with limit 5 reads a few bytes: public fault 18),
 * binary files are refused with a clear message (public fault 16), a BOM is never shown (fault 10),
 * and the session's own spill files (named in bash footers) are readable from the host store.
 */
import { type Static, Type } from "typebox";
import { InvalidArgumentError, NotFoundError } from "../errors.js";
import type { ReadFileResult, ReadRange } from "../sandbox/types.js";
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, formatSize } from "../truncate/types.js";
import { throwIfAborted } from "../util/abort.js";
import { detectImageMimeType } from "./image-detect.js";
import { type FittedImage, fitImage, IMAGE_DECODE_TIMEOUT_MS, MAX_DECODE_PIXELS } from "./image-resize.js";
import { isWithinRoots, normalizeToolPath, readPathVariants, resolveToolPath } from "./paths.js";
import {
  firstLineOverLimit,
  formatTextRead,
  type ReadSource,
  type ReadTextDetails,
  textReadRequest,
} from "./read-text.js";
import type { Tool, ToolContext, ToolOutput } from "./types.js";

/** Bytes of the file's start examined for image magic and NUL bytes (the "first chunk"). */
export const SNIFF_BYTES = 4096;
/** Largest image file read to be sent (20 MiB): larger ones are not read, a note says so. */
export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;

const readSchema = Type.Object({
  path: Type.String({ description: "Path to the file to read (relative or absolute)" }),
  offset: Type.Optional(Type.Number({ description: "Line number to start reading from (1-indexed)" })),
  limit: Type.Optional(Type.Number({ description: "Maximum number of lines to read" })),
});

/** Arguments of the read tool. */
export type ReadToolInput = Static<typeof readSchema>;

/** details of a read result: text truncation and replacements, or the image's type and size. */
export interface ReadToolDetails extends ReadTextDetails {
  /** True when the path was one of the session's spill files. */
  spill?: boolean;
  image?: { mimeType: string; bytes: number; returned: boolean };
}

function openSource(path: string, ctx: ToolContext): ReadSource | Promise<ReadSource> {
  const spillPath = path.startsWith("@") ? path.slice(1) : path;
  if (ctx.spill.owns(spillPath)) {
    return { displayPath: spillPath, isSpill: true, read: (range) => ctx.spill.read(spillPath, range) };
  }
  return openSandboxSource(path, ctx);
}

/** A confined sandbox file. A failed read is explained by a stat (only on the error path, to save an exec). */
async function openSandboxSource(path: string, ctx: ToolContext): Promise<ReadSource> {
  const { sandbox, signal } = ctx;
  let { canonical } = await resolveToolPath(sandbox, path, { signal });
  const read = async (range: ReadRange): Promise<ReadFileResult> => {
    try {
      return await sandbox.readFile(canonical, range, { signal });
    } catch (err) {
      const stat = await sandbox.stat(canonical, { signal }).catch(() => undefined);
      if (stat === null) {
        const variant = await existingVariant(path, ctx);
        if (variant === undefined) throw new NotFoundError(`File not found: ${path}`);
        canonical = variant;
        return sandbox.readFile(canonical, range, { signal });
      }
      if (stat?.type === "directory") {
        throw new InvalidArgumentError(`Cannot read '${path}': it is a directory. Use ls to list it.`);
      }
      throw err;
    }
  };
  return { displayPath: path, isSpill: false, read, lineBytes: (line) => measureLine(canonical, line, ctx) };
}

/** The canonical path of the first of Pi's other spellings of `path` that exists (readPathVariants). */
async function existingVariant(path: string, ctx: ToolContext): Promise<string | undefined> {
  const { sandbox, signal } = ctx;
  const roots = sandbox.info.roots;
  // Variants are already normalised (resolveToolPath would turn the narrow no-break space back).
  for (const variant of readPathVariants(normalizeToolPath(path))) {
    if (!isWithinRoots(variant, roots)) continue;
    const canonical = await sandbox.realpath(variant, { signal });
    if (!isWithinRoots(canonical, roots)) continue;
    if ((await sandbox.stat(canonical, { signal })) !== null) return canonical;
  }
  return undefined;
}

/**
 * Byte length of one line of a sandbox file (without its newline), measured inside the sandbox with
 * awk in the C locale (bytes), for the note on a line over 50 KiB. Undefined when it cannot be measured.
 */
async function measureLine(canonical: string, line: number, ctx: ToolContext): Promise<number | undefined> {
  let out = "";
  const result = await ctx.sandbox
    .exec(
      { argv: ["awk", `NR == ${line} { print length($0); exit }`, canonical] },
      { env: { LC_ALL: "C" }, timeoutMs: 30_000, signal: ctx.signal, onStdout: (c) => (out += c.toString()) },
    )
    .catch(() => undefined);
  const bytes = Number.parseInt(out.trim(), 10);
  return result?.exitCode === 0 && Number.isFinite(bytes) ? bytes : undefined;
}

async function readImage(
  source: ReadSource,
  mimeType: string,
  size: number,
  signal: AbortSignal | undefined,
): Promise<ToolOutput<ReadToolDetails>> {
  const spill = source.isSpill ? { spill: true } : {};
  const notSent = (note: string): ToolOutput<ReadToolDetails> => ({
    content: [{ type: "text", text: `Read image file [${mimeType}]\n${note}` }],
    details: { ...spill, image: { mimeType, bytes: size, returned: false } },
  });
  if (size > MAX_IMAGE_BYTES) {
    return notSent(
      `[Image omitted: the file is ${formatSize(size)}, over the ${formatSize(MAX_IMAGE_BYTES)} limit for images. ` +
        "Make a smaller copy and read that.]",
    );
  }
  const { data } = await source.read({ kind: "bytes", offset: 0, length: size });
  const fitted = await fitImage(data, mimeType, { signal });
  if (fitted.kind === "omitted") return notSent(omittedImageNote(fitted));
  if (fitted.kind === "original") {
    return {
      content: [
        { type: "text", text: `Read image file [${mimeType}]` },
        { type: "image", data: data.toString("base64"), mimeType },
      ],
      details: { ...spill, image: { mimeType, bytes: data.length, returned: true } },
    };
  }
  const scale = (fitted.originalWidth / fitted.width).toFixed(2);
  const note =
    `[Image: original ${fitted.originalWidth}x${fitted.originalHeight}, displayed at ${fitted.width}x${fitted.height}. ` +
    `Multiply coordinates by ${scale} to map to original image.]`;
  return {
    content: [
      { type: "text", text: `Read image file [${fitted.mimeType}]\n${note}` },
      { type: "image", data: fitted.data.toString("base64"), mimeType: fitted.mimeType },
    ],
    details: { ...spill, image: { mimeType: fitted.mimeType, bytes: fitted.data.length, returned: true } },
  };
}

/** Pi's note for an image it could not send; warden's own for its decoding bounds. */
function omittedImageNote(fitted: Extract<FittedImage, { kind: "omitted" }>): string {
  if (fitted.reason === "too-many-pixels") {
    return (
      `[Image omitted: ${fitted.pixels} pixels is over the ${MAX_DECODE_PIXELS} pixel limit for decoding ` +
      "images. Make a smaller copy and read that.]"
    );
  }
  if (fitted.reason === "timeout") {
    return `[Image omitted: decoding it took longer than ${IMAGE_DECODE_TIMEOUT_MS / 1000} s.]`;
  }
  return "[Image omitted: could not be resized below the inline image size limit.]";
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
