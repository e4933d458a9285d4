/**
 * Internal helper for warden's own short commands (stat, realpath, file reads): runs an argv
 * directly (no process-group wrapper; these never background anything) and collects stdout up to
 * a byte cap and stderr up to 16 KiB. Aborting ends the call with AbortError.
 */
import type Docker from "dockerode";
import { AbortError, onAbort, throwIfAborted } from "../../../util/index.js";
import { startDockerExec } from "./run.js";

/** What a captured command produced. `stdoutTruncated` is true when output passed the cap. */
export interface CaptureResult {
  stdout: Buffer;
  stdoutTruncated: boolean;
  stderr: string;
  exitCode: number | null;
}

const STDERR_CAP_BYTES = 16 * 1024;

/** Runs `cmd` (argv) as the sandbox user and buffers its output (stdout capped at `maxStdoutBytes`). */
export async function captureExec(
  container: Docker.Container,
  cmd: string[],
  options: { signal?: AbortSignal; maxStdoutBytes?: number } = {},
): Promise<CaptureResult> {
  throwIfAborted(options.signal);
  const cap = options.maxStdoutBytes ?? 1024 * 1024;
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  let outBytes = 0;
  let errBytes = 0;
  let truncated = false;
  const running = await startDockerExec(
    container,
    { cmd },
    {
      onStdout: (chunk) => {
        const room = cap - outBytes;
        if (room <= 0) {
          truncated = true;
          return;
        }
        if (chunk.length > room) truncated = true;
        const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
        out.push(Buffer.from(part));
        outBytes += part.length;
      },
      onStderr: (chunk) => {
        if (errBytes >= STDERR_CAP_BYTES) return;
        err.push(Buffer.from(chunk));
        errBytes += chunk.length;
      },
    },
  );
  let aborted = false;
  const remove = onAbort(options.signal, () => {
    aborted = true;
    running.detach();
  });
  try {
    const exitCode = await running.done;
    if (aborted) throw new AbortError();
    return {
      stdout: Buffer.concat(out),
      stdoutTruncated: truncated,
      stderr: Buffer.concat(err).toString("utf8"),
      exitCode,
    };
  } finally {
    remove();
  }
}
