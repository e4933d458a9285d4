/**
 * The bound of GET /v1/sessions/:id/workspace (the tar download). Before the archive starts, one
 * command in the sandbox measures the workspace by apparent size (GNU `du -sb`: a sparse file
 * counts whole, as tar writes it, since tar stores no holes here) and looks for one file over the
 * bound (`find -size +Nc -quit`); over WORKSPACE_DOWNLOAD_MAX_BYTES the answer is 413
 * PAYLOAD_TOO_LARGE naming the file (or the total) and the limit. A workspace growing while the
 * archive streams is cut at twice the bound (the connection ends, the tar incomplete). Issue 37:
 * a 50 GB sparse file made the download effectively unbounded (821 MB in 35 s and counting).
 */
import { type Readable, Transform } from "node:stream";
import { PayloadTooLargeError, SandboxError } from "../../errors.js";
import type { Sandbox } from "../../sandbox/index.js";
import { WORKSPACE_DIR } from "../../sandbox/index.js";

/** Largest workspace GET /workspace archives, apparent bytes of its files (2 GiB). */
export const WORKSPACE_DOWNLOAD_MAX_BYTES = 2 * 1024 * 1024 * 1024;

/** Output of the measuring command kept, per stream (bytes). */
const OUTPUT_KEPT_BYTES = 16 * 1024;

/** A 413 (PayloadTooLargeError) whose message, a sentence, names the limit. */
function tooLarge(message: string): PayloadTooLargeError {
  return new PayloadTooLargeError(`${message}.`);
}

/**
 * Checks the workspace of `sandbox` against `maxBytes` (apparent sizes). Rejects a 413 naming the
 * first file found over it, else the total over it; SandboxError when the measuring command fails.
 */
export async function checkWorkspaceDownload(
  sandbox: Pick<Sandbox, "exec">,
  maxBytes: number,
  signal: AbortSignal,
): Promise<void> {
  // A directory the sandbox user may not read is left out of both (the archive cannot hold it
  // either), not a failure: only a missing total is.
  const script = `du -sb . 2>/dev/null | cut -f1; find . -type f -size +${maxBytes}c -printf '%s %P\\0' -quit 2>/dev/null; exit 0`;
  // A total and at most one name (a path is at most PATH_MAX): a few KiB are kept of each stream.
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const keep = (into: Buffer[]) => (chunk: Buffer) => {
    if (into.reduce((n, c) => n + c.length, 0) < OUTPUT_KEPT_BYTES) into.push(chunk);
  };
  const res = await sandbox.exec(
    { argv: ["sh", "-c", script] },
    { cwd: WORKSPACE_DIR, signal, onStdout: keep(out), onStderr: keep(err) },
  );
  const stdout = Buffer.concat(out).toString("utf8");
  const newline = stdout.indexOf("\n");
  const totalLine = newline < 0 ? "" : stdout.slice(0, newline);
  const found = newline < 0 ? "" : stdout.slice(newline + 1);
  const total = Number(totalLine);
  if (res.exitCode !== 0 || totalLine === "" || !Number.isFinite(total)) {
    const stderr = Buffer.concat(err).toString("utf8").trim();
    throw new SandboxError(`measuring ${WORKSPACE_DIR} failed (exit ${res.exitCode}): ${stderr}`);
  }
  const limit = `the workspace download limit of ${maxBytes} bytes (apparent sizes: a sparse file counts whole)`;
  const file = found.replace(/\0$/, "");
  if (file !== "") {
    const space = file.indexOf(" ");
    const [size, name] = [file.slice(0, space), file.slice(space + 1)];
    throw tooLarge(
      `File '${name}' (${size} bytes) is over ${limit}; remove or truncate it, or read what you need with GET /v1/sessions/:id/files`,
    );
  }
  if (total > maxBytes) {
    throw tooLarge(
      `The workspace (${total} bytes) is over ${limit}; remove files, or read what you need with GET /v1/sessions/:id/files or /changes`,
    );
  }
}

/** `archive` passed through, destroyed with an error once more than `maxBytes` went by. */
export function cutAfter(archive: Readable, maxBytes: number): Readable {
  let bytes = 0;
  const cut = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      if (bytes > maxBytes)
        done(
          new PayloadTooLargeError(
            `the workspace archive passed ${maxBytes} bytes while it streamed (the workspace grew while it was archived); download it again, or read what you need with GET /v1/sessions/:id/files`,
          ),
        );
      else done(null, chunk);
    },
  });
  archive.on("error", (err) => cut.destroy(err));
  cut.on("close", () => archive.destroy());
  return archive.pipe(cut);
}
