/**
 * The bash tool (Pi's bash: pi-mono coding-agent core/tools/bash.ts), run inside the sandbox with
 * `bash -c` in its own process group. stdout and stderr are merged in arrival order, sanitised
 * (invalid UTF-8 and NUL replaced and counted, ANSI removed), kept as a bounded tail for live
 * updates and the result, and written raw to a spill file. Differences from Pi, all safer: the
 * spill file is kept for line-limit cuts too (earendil-works/pi#2852), is owner-only and removed
 * with the session; a process killed by a signal is a failure (128+N), never a success.
 */
import { type Static, Type } from "typebox";
import { InvalidArgumentError } from "../errors.js";
import type { ExecResult } from "../sandbox/types.js";
import { OutputSanitizer } from "../truncate/sanitize.js";
import { TailAccumulator } from "../truncate/tail-accumulator.js";
import {
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_LINES,
  formatSize,
  type TruncationResult,
} from "../truncate/types.js";
import { CommandFailedError } from "./command-error.js";
import { joinBlocks, replacedBytesNotice } from "./output-notice.js";
import type { SpillWriter, Tool, ToolContext } from "./types.js";

/** Minimum interval between live updates, in ms (Pi's 100 ms; the pipeline also caps at 10/s). */
export const BASH_UPDATE_INTERVAL_MS = 100;
/** Largest timeout Node timers allow, in seconds. */
const MAX_TIMEOUT_SECONDS = 2_147_483_647 / 1000;

const bashSchema = Type.Object({
  command: Type.String({ description: "Bash command to execute" }),
  timeout: Type.Optional(
    Type.Number({ description: "Timeout in seconds (optional, no default timeout)", exclusiveMinimum: 0 }),
  ),
});

/** Arguments of the bash tool. */
export type BashToolInput = Static<typeof bashSchema>;

/** details of a bash result (also on the CommandFailedError of a failed command). */
export interface BashToolDetails {
  /** 0 on success; the process's code; 128+N for signal N; 124 on timeout; 130 on abort. */
  exitCode: number;
  timedOut: boolean;
  aborted: boolean;
  durationMs: number;
  /** Present when the output was cut. */
  truncation?: TruncationResult;
  /** Host path of the spill file with the full raw output; present when the output was cut. */
  fullOutputPath?: string;
  /** Invalid UTF-8 / NUL bytes replaced with U+FFFD in the shown text. */
  replacedBytes?: number;
}

/** Pi's footer for a cut output, naming the spill file. */
function truncationFooter(t: TruncationResult, lastLineBytes: number, spillPath: string): string {
  const startLine = t.totalLines - t.outputLines + 1;
  const endLine = t.totalLines;
  if (t.lastLinePartial) {
    return `[Showing last ${formatSize(t.outputBytes)} of line ${endLine} (line is ${formatSize(lastLineBytes)}). Full output: ${spillPath}]`;
  }
  if (t.truncatedBy === "lines") {
    return `[Showing lines ${startLine}-${endLine} of ${t.totalLines}. Full output: ${spillPath}]`;
  }
  return `[Showing lines ${startLine}-${endLine} of ${t.totalLines} (${formatSize(DEFAULT_MAX_BYTES)} limit). Full output: ${spillPath}]`;
}

/** Sends the current tail at most every BASH_UPDATE_INTERVAL_MS, and only when it changed. */
function updateThrottle(ctx: ToolContext, snapshot: () => TruncationResult) {
  let timer: NodeJS.Timeout | undefined;
  let last = 0;
  const emit = () => {
    timer = undefined;
    last = Date.now();
    ctx.onUpdate?.({ content: [{ type: "text", text: snapshot().content }] });
  };
  return {
    changed(): void {
      if (!ctx.onUpdate || timer) return;
      const wait = BASH_UPDATE_INTERVAL_MS - (Date.now() - last);
      if (wait <= 0) emit();
      else timer = setTimeout(emit, wait);
    },
    stop(): void {
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
}

function timeoutMs(timeout: number | undefined): number | undefined {
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
    await spill.close();
    details.truncation = t;
    details.fullOutputPath = spill.path;
    footer = truncationFooter(t, tail.lastLineBytes, spill.path);
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
      const spill = await ctx.spill.create("bash");
      const sanitizer = new OutputSanitizer();
      const tail = new TailAccumulator();
      const updates = updateThrottle(ctx, () => tail.snapshot());
      const onData = (chunk: Buffer) => {
        spill.write(chunk);
        tail.push(sanitizer.push(chunk));
        updates.changed();
      };
      let result: ExecResult;
      try {
        result = await ctx.sandbox.exec(
          { shell: args.command },
          { timeoutMs: limitMs, signal: ctx.signal, onStdout: onData, onStderr: onData },
        );
      } catch (err) {
        updates.stop();
        await spill.discard();
        throw err;
      }
      updates.stop();
      tail.push(sanitizer.end());
      const { text, details } = await finish(args, result, tail, sanitizer, spill);
      return { content: [{ type: "text", text }], details };
    },
  };
}
