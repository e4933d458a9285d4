/**
 * Unpacks an uploaded workspace tar (tar-stream) into a fresh private host directory, safely: entry
 * names that are absolute or climb with `..` are refused, as is any entry below a symlink the archive
 * itself created (the "tar slip" through a link), a second entry of a name (a file written over an
 * earlier symlink would write through it: only a directory may repeat as a directory), hard links
 * and device nodes. Files are created exclusively (never through an existing link). Files, directories and
 * symlinks (kept as links) are written with their permission bits. The byte count of the body and
 * the number of entries are capped; over either the upload stops with a 413 (entries: 256 MiB of
 * empty files was half a million host inodes, each later walked by the copy into the sandbox).
 */
import { createWriteStream } from "node:fs";
import { chmod, mkdir, mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, posix } from "node:path";
import { type Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { extract } from "tar-stream";
import { InvalidArgumentError, PayloadTooLargeError, WardenError } from "../../errors.js";
import { DEFAULT_TAR_MAX_ENTRIES } from "../config/index.js";

/**
 * Where `warden serve` unpacks uploaded workspaces: `<stateDir>/uploads`, so that reconcile can
 * remove what a crash left there (a partly unpacked tar, or the copy of a session that is gone).
 */
export function uploadsDirOf(stateDir: string): string {
  return join(stateDir, "uploads");
}

/** The body was larger, or had more entries, than allowed (PAYLOAD_TOO_LARGE, HTTP 413). */
class UploadTooLargeError extends PayloadTooLargeError {}

function safeName(name: string): string {
  const normal = posix.normalize(name.replace(/^\.\/+/, ""));
  if (name.startsWith("/") || normal === ".." || normal.startsWith("../") || normal.includes("\0")) {
    throw new InvalidArgumentError(`workspace tar entry '${name}' leaves the workspace; use relative names.`);
  }
  return normal.replace(/\/+$/, "");
}

/**
 * Unpacks `body` into a new directory under `parent` (default os.tmpdir()) and returns its path.
 * Throws InvalidArgumentError for unsafe entries, UploadTooLargeError past `maxBytes` or past
 * `maxEntries` entries (the config's tarBodyLimitBytes and tarMaxEntries); the directory is removed on failure.
 */
export async function unpackWorkspaceTar(
  body: Readable,
  maxBytes: number,
  parent = tmpdir(),
  maxEntries = DEFAULT_TAR_MAX_ENTRIES,
): Promise<string> {
  const root = await mkdtemp(join(parent, "warden-upload-"));
  /** Entry names unpacked so far, with their type (a symlink's name may never lead a later entry). */
  const typeOf = new Map<string, string>();
  let seen = 0;
  let entries = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      seen += chunk.length;
      const over = seen > maxBytes;
      cb(
        over
          ? new UploadTooLargeError(
              `Workspace tar is larger than ${maxBytes} bytes (tarBodyLimitBytes); upload a smaller workspace.`,
            )
          : null,
        chunk,
      );
    },
  });
  const unpack = extract();
  unpack.on("entry", (header, stream, next) => {
    const handle = async () => {
      if (++entries > maxEntries) {
        throw new UploadTooLargeError(
          `Workspace tar has more than ${maxEntries} entries (tarMaxEntries); upload fewer files, e.g. without build outputs.`,
        );
      }
      const name = safeName(header.name);
      if (name === "." || name === "") {
        stream.resume();
        return;
      }
      const parts = name.split("/");
      for (let i = 1; i < parts.length; i++) {
        if (typeOf.get(parts.slice(0, i).join("/")) === "symlink") {
          throw new InvalidArgumentError(
            `workspace tar entry '${header.name}' lies below a symlink of the archive.`,
          );
        }
      }
      const earlier = typeOf.get(name);
      if (earlier !== undefined && !(earlier === "directory" && header.type === "directory")) {
        throw new InvalidArgumentError(
          `workspace tar entry '${header.name}' repeats an earlier entry's name; each name may appear once.`,
        );
      }
      typeOf.set(name, header.type ?? "file");
      const target = join(root, name);
      await mkdir(join(root, ...parts.slice(0, -1)), { recursive: true });
      const mode = (header.mode ?? 0o644) & 0o777;
      if (header.type === "directory") {
        await mkdir(target, { recursive: true });
        await chmod(target, mode | 0o700);
        stream.resume();
      } else if (header.type === "file" || header.type === "contiguous-file") {
        await pipeline(stream, createWriteStream(target, { mode, flags: "wx" }));
      } else if (header.type === "symlink" && header.linkname) {
        await symlink(header.linkname, target);
        stream.resume();
      } else {
        throw new InvalidArgumentError(
          `workspace tar entry '${header.name}' has type ${header.type}; only files, directories and symlinks are accepted.`,
        );
      }
    };
    handle().then(
      () => next(),
      (err: unknown) => {
        stream.resume();
        next(err as Error);
      },
    );
  });
  // The first error of any stage ends the upload at once: stream.pipeline calls back only when every
  // stage has closed, and on Node 22+ tar-stream's extract, destroyed while an entry is being
  // written, never closes (a tar past tarBodyLimitBytes hung its request instead of a 413).
  let failFast: (err: Error) => void = () => undefined;
  const firstError = new Promise<never>((_, reject) => {
    failFast = reject;
  });
  firstError.catch(() => undefined);
  counter.once("error", failFast);
  unpack.once("error", failFast);
  const piped = pipeline(body, counter, unpack);
  piped.catch(() => undefined);
  try {
    await Promise.race([piped, firstError]);
    return root;
  } catch (err) {
    await rm(root, { recursive: true, force: true });
    if (err instanceof WardenError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code) {
      // A file-system error: name its code, never the server's own upload path.
      throw new InvalidArgumentError(
        `workspace tar could not be unpacked (${code}); check the entries' names (at most 255 bytes a component) and sizes.`,
      );
    }
    throw new InvalidArgumentError(
      `workspace tar body is not a valid tar archive: ${(err as Error).message}.`,
    );
  }
}
