/**
 * Runs a search command (rg, fd) in the sandbox as an argv (never a shell string), streaming its
 * stdout record by record into a consumer that can stop it early; stopping aborts the exec, which
 * kills the command's process group in the container. Memory stays bounded: records are handed over
 * as they complete, oversized records are dropped, and stderr is kept up to 4 KiB.
 */
import { SandboxError } from "../errors.js";
import type { Sandbox } from "../sandbox/index.js";
import { AbortError, omitUndefined } from "../util/index.js";
import { RecordSplitter } from "./search-common.js";

/** How to run one search command. */
export interface SearchExecOptions {
  /** Record separator byte: 0x0a (newline) or 0x00 (NUL). */
  separator: number;
  /** Records longer than this many bytes are dropped. */
  maxRecordBytes: number;
  /** Gets each record; "stop" ends the command. */
  onRecord: (record: string) => "continue" | "stop";
  signal?: AbortSignal;
  /** Working directory in the sandbox. Default /workspace. */
  cwd?: string;
}

/** Outcome of a search command. `stopped` is true when the consumer stopped it. */
export interface SearchExecResult {
  exitCode: number;
  stopped: boolean;
  stderr: string;
  /** Records dropped for being longer than `maxRecordBytes`. */
  droppedRecords: number;
}

const MAX_STDERR_BYTES = 4096;

/**
 * Runs `argv` in the sandbox (cwd `options.cwd`, default /workspace). Rejects AbortError when `signal` fires, and
 * SandboxError when the program is missing from the image (exit 127).
 */
export async function runSearchCommand(
  sandbox: Sandbox,
  argv: string[],
  options: SearchExecOptions,
): Promise<SearchExecResult> {
  const stopper = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, stopper.signal]) : stopper.signal;
  const splitter = new RecordSplitter(options.separator, options.maxRecordBytes);
  let stopped = false;
  let stderr = Buffer.alloc(0);
  const feed = (records: string[]): void => {
    for (const record of records) {
      if (stopped) return;
      if (options.onRecord(record) === "stop") {
        stopped = true;
        stopper.abort();
      }
    }
  };
  const result = await sandbox.exec(
    { argv },
    {
      signal,
      ...(options.cwd ? { cwd: options.cwd } : {}),
      onStdout: (chunk) => {
        if (!stopped) feed(splitter.push(chunk));
      },
      onStderr: (chunk) => {
        if (stderr.length < MAX_STDERR_BYTES) {
          stderr = Buffer.concat([stderr, chunk]).subarray(0, MAX_STDERR_BYTES);
        }
      },
    },
  );
  if (options.signal?.aborted) throw new AbortError();
  if (!stopped) feed(splitter.end());
  if (result.exitCode === 127 && !stopped) {
    throw new SandboxError(
      `'${argv[0]}' is not installed in the sandbox image; rebuild it with 'warden images build'.`,
    );
  }
  return {
    exitCode: result.exitCode,
    stopped,
    stderr: stderr.toString("utf8"),
    droppedRecords: splitter.dropped,
  };
}

// Paths per `realpath` call, keeping argv far below the kernel's limits.
const REALPATH_BATCH = 256;

/**
 * Canonical paths of `paths` resolved inside the sandbox (`realpath -m`: symlinks followed, missing
 * tails appended), in the same order. One exec per 256 paths. Rejects SandboxError when realpath fails.
 */
export async function realpathMany(
  sandbox: Sandbox,
  paths: readonly string[],
  signal?: AbortSignal,
): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < paths.length; i += REALPATH_BATCH) {
    const batch = paths.slice(i, i + REALPATH_BATCH);
    const chunks: Buffer[] = [];
    const res = await sandbox.exec(
      { argv: ["realpath", "-m", "-z", "--", ...batch] },
      { ...omitUndefined({ signal }), onStdout: (chunk) => chunks.push(chunk) },
    );
    if (signal?.aborted) throw new AbortError();
    const resolved = Buffer.concat(chunks).toString("utf8").split("\0").slice(0, -1);
    if (res.exitCode !== 0 || resolved.length !== batch.length) {
      throw new SandboxError(
        `resolving ${batch.length} search results failed (realpath exit ${res.exitCode}).`,
      );
    }
    out.push(...resolved);
  }
  return out;
}
