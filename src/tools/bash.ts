/**
 * The bash tool (Pi's bash: pi-mono coding-agent core/tools/bash.ts), run inside the sandbox with
 * `bash -c` in its own process group. stdout and stderr are merged in arrival order, sanitised
 * (invalid UTF-8 and NUL replaced and counted, ANSI removed), kept as a bounded tail for live
 * updates and the result, and written raw to a spill file. Differences from Pi, all safer: the
 * spill file is kept for line-limit cuts too (earendil-works/pi#2852), is owner-only, capped per
 * session and tenant, named by a handle read resolves (not a host path), and removed with the
 * session; a process killed by a signal is a failure (128+N), never a success.
 */
import { type Static, Type } from "typebox";
import { InvalidArgumentError } from "../errors.js";
import type { ExecResult } from "../sandbox/index.js";
import {
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_LINES,
  formatSize,
  OutputSanitizer,
  TailAccumulator,
  type TruncationResult,
} from "../truncate/index.js";
import { omitUndefined, type Throttled, throttle } from "../util/index.js";
import { CommandFailedError } from "./command-error.js";
import { joinBlocks, replacedBytesNotice } from "./output-notice.js";
import type { SpillSummary, SpillWriter, Tool, ToolContext } from "./types.js";

/** Minimum interval between live updates, in ms (Pi's 100 ms; the pipeline also caps at 10/s). */
const BASH_UPDATE_INTERVAL_MS = 100;
/**
 * Longest command the sandbox can run, in UTF-8 bytes: the command is one `bash -c` argument, and
 * Linux passes one argv string of at most MAX_ARG_STRLEN = 32 pages = 131072 bytes including its NUL
 * (longer fails with E2BIG). Checked before anything runs, so the model gets this limit instead of
 * an exec error.
 */
export const MAX_BASH_COMMAND_BYTES = 131_071;
/** Largest timeout Node timers allow, in seconds. */
const MAX_TIMEOUT_SECONDS = 2_147_483_647 / 1000;

const bashSchema = Type.Object({
  command: Type.String({ description: "Bash command to execute" }),
  timeout: Type.Optional(
    Type.Number({ description: "Timeout in seconds (optional, no default timeout)", exclusiveMinimum: 0 }),
  ),
});

/** Arguments of the bash tool. */
type BashToolInput = Static<typeof bashSchema>;

/** details of a bash result (also on the CommandFailedError of a failed command). */
export interface BashToolDetails {
  /** 0 on success; the process's code; 128+N for signal N; 124 on timeout; 130 on abort. */
  exitCode: number;
  timedOut: boolean;
  aborted: boolean;
  durationMs: number;
  /** Present when the output was cut. */
  truncation?: TruncationResult;
  /**
   * Handle of the spill file with the raw output (`/spill/<name>`, which read opens; never a host
   * path); present when the output was cut and the file kept at least one byte.
   */
  fullOutputPath?: string;
  /** What the spill file kept, when it could not keep everything (a spill cap, or a host write error). */
  spill?: SpillSummary;
  /** Invalid UTF-8 / NUL bytes replaced with U+FFFD in the shown text. */
  replacedBytes?: number;
}

/**
 * Where the full output is, for the footer: Pi's "Full output: <path>" with the spill handle, or,
 * when a spill cap or a host error stopped the file, what it kept, which cap and how to raise it.
 */
function fullOutputNote(s: SpillSummary): string {
  if (s.keptBytes === s.totalBytes) return `Full output: ${s.handle}`;
  const kept =
    s.keptBytes === 0
      ? "none of it was kept"
      : `${s.handle} holds only its first ${formatSize(s.keptBytes)} of ${formatSize(s.totalBytes)}`;
  if (s.cappedBy) {
    const { scope, limitBytes, raiseHint } = s.cappedBy;
    return `Full output not kept: the ${scope}'s spill files reached their ${formatSize(limitBytes)} cap, so ${kept} (raise the cap with ${raiseHint})`;
  }
  return `Full output not kept: writing the spill file failed (${s.error}), so ${kept}`;
}

/** Pi's footer for a cut output, naming the spill file (fullOutputNote). */
function truncationFooter(t: TruncationResult, lastLineBytes: number, fullOutput: string): string {
  const startLine = t.totalLines - t.outputLines + 1;
  const endLine = t.totalLines;
  if (t.lastLinePartial) {
    return `[Showing last ${formatSize(t.outputBytes)} of line ${endLine} (line is ${formatSize(lastLineBytes)}). ${fullOutput}]`;
  }
  if (t.truncatedBy === "lines") {
    return `[Showing lines ${startLine}-${endLine} of ${t.totalLines}. ${fullOutput}]`;
  }
  return `[Showing lines ${startLine}-${endLine} of ${t.totalLines} (${formatSize(DEFAULT_MAX_BYTES)} limit). ${fullOutput}]`;
}

/** Sends the current tail at most every BASH_UPDATE_INTERVAL_MS (read when sent, so always the latest). */
function tailUpdates(ctx: ToolContext, snapshot: () => TruncationResult): Throttled<void> | undefined {
  const { onUpdate } = ctx;
  if (!onUpdate) return undefined;
  return throttle<void>(
    () => onUpdate({ content: [{ type: "text", text: snapshot().content }] }),
    BASH_UPDATE_INTERVAL_MS,
  );
}

/**
 * A tool's `timeout` (seconds, optional, no default) in ms, rounded up. Throws InvalidArgumentError
 * unless it is > 0 and at most what Node timers allow.
 */
export function timeoutMs(timeout: number | undefined): number | undefined {
  if (timeout === undefined) return undefined;
  if (!(timeout > 0) || timeout > MAX_TIMEOUT_SECONDS) {
    throw new InvalidArgumentError(
      `timeout must be > 0 and at most ${MAX_TIMEOUT_SECONDS} seconds, got ${timeout}.`,
    );
  }
  return Math.ceil(timeout * 1000);
}

/** The model-visible text and details of a finished command; throws CommandFailedError unless it succeeded. */
async function finish(
  args: BashToolInput,
  result: ExecResult,
  tail: TailAccumulator,
  sanitizer: OutputSanitizer,
  spill: SpillWriter,
): Promise<{ text: string; details: BashToolDetails }> {
  const t = tail.snapshot();
  const details: BashToolDetails = {
    exitCode: result.exitCode,
    timedOut: result.timedOut,
    aborted: result.aborted,
    durationMs: result.durationMs,
  };
  let footer: string | undefined;
  if (t.truncated) {
    await spill.close(); // its queued writes land first, so the summary is final
    const summary = spill.summary();
    if (summary.keptBytes > 0) details.fullOutputPath = summary.handle;
    else await spill.discard();
    details.truncation = t;
    if (summary.keptBytes < summary.totalBytes) details.spill = summary;
    footer = truncationFooter(t, tail.lastLineBytes, fullOutputNote(summary));
  } else {
    await spill.discard();
  }
  if (sanitizer.replacedBytes > 0) details.replacedBytes = sanitizer.replacedBytes;
  const notice = sanitizer.replacedBytes > 0 ? replacedBytesNotice(sanitizer.replacedBytes) : undefined;
  const shown = joinBlocks(t.content, footer, notice);
  if (result.timedOut) {
    throw new CommandFailedError(
      "TIMEOUT",
      joinBlocks(shown, `Command timed out after ${args.timeout} seconds`),
      details,
    );
  }
  if (result.aborted) throw new CommandFailedError("ABORTED", joinBlocks(shown, "Command aborted"), details);
  const text = shown || "(no output)";
  if (result.exitCode !== 0) {
    throw new CommandFailedError(
      "COMMAND_FAILED",
      `${text}\n\nCommand exited with code ${result.exitCode}`,
      details,
    );
  }
  return { text, details };
}

/** Throws InvalidArgumentError for a command longer than the sandbox can run (MAX_BASH_COMMAND_BYTES). */
export function checkRunnable(command: string): void {
  const bytes = Buffer.byteLength(command, "utf8");
  if (bytes > MAX_BASH_COMMAND_BYTES) {
    throw new InvalidArgumentError(
      `bash command is ${bytes} bytes, over the ${MAX_BASH_COMMAND_BYTES} bytes one command can have ` +
        "(Linux's limit for one argument). Split it into shorter commands, or write long content " +
        "with the write tool. Nothing was run.",
    );
  }
}

/** Creates the bash tool. A failed command throws CommandFailedError (an isError result). */
export function createBashTool(): Tool<typeof bashSchema, BashToolDetails> {
  return {
    name: "bash",
    label: "bash",
    description:
      "Execute a bash command in the current working directory. Returns stdout and stderr. Output is truncated to " +
      `last ${DEFAULT_MAX_LINES} lines or ${DEFAULT_MAX_BYTES / 1024}KB (whichever is hit first). If truncated, full ` +
      "output is saved to a temp file. Optionally provide a timeout in seconds.",
    parameters: bashSchema,
    async execute(_toolCallId, args, ctx) {
      const limitMs = timeoutMs(args.timeout);
      checkRunnable(args.command);
      const spill = await ctx.spill.create("bash");
      const sanitizer = new OutputSanitizer();
      const tail = new TailAccumulator();
      const updates = tailUpdates(ctx, () => tail.snapshot());
      const onData = (chunk: Buffer) => {
        const full = spill.write(chunk); // a promise while the spill queue is full: exec pauses its stream
        tail.push(sanitizer.push(chunk));
        updates?.push();
        return full;
      };
      let result: ExecResult;
      try {
        result = await ctx.sandbox.exec(
          { shell: args.command },
          omitUndefined({ timeoutMs: limitMs, signal: ctx.signal, onStdout: onData, onStderr: onData }),
        );
      } catch (err) {
        updates?.cancel();
        await spill.discard();
        throw err;
      }
      updates?.cancel();
      tail.push(sanitizer.end());
      const { text, details } = await finish(args, result, tail, sanitizer, spill);
      return { content: [{ type: "text", text }], details };
    },
  };
}
