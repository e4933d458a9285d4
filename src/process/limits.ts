/**
 * Per-session limits of background processes, their defaults, and checks of the values a caller
 * passes (a start's terminal size, an input's length).
 */
import { InvalidArgumentError, PayloadTooLargeError } from "../errors.js";
import type { ProcessLimits, TerminalSize } from "./types.js";

/** Defaults: 8 running, 16 exited kept, 8 MiB of output kept per process in 1 MiB segments. */
const DEFAULT_PROCESS_LIMITS: ProcessLimits = {
  maxRunning: 8,
  maxExited: 16,
  keptOutputBytes: 8 * 1024 * 1024,
  segmentBytes: 1024 * 1024,
};

/** Largest input of one `write`, in bytes (1 MiB): a bigger one belongs in a file. */
const MAX_INPUT_BYTES = 1024 * 1024;

/** After the main command exits, how long what it left may run and write before it is killed (ms). */
export const PROCESS_GRACE_MS = 100;

/**
 * The limits with `partial`'s fields over the defaults. Throws InvalidArgumentError naming a field
 * that is not a positive integer, or a keptOutputBytes that is not a multiple of segmentBytes.
 */
export function resolveProcessLimits(partial: Partial<ProcessLimits> = {}): ProcessLimits {
  const limits = { ...DEFAULT_PROCESS_LIMITS, ...partial };
  for (const [field, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value <= 0)
      throw new InvalidArgumentError({
        field: `processes.${field}`,
        problem: `must be a positive integer, got ${String(value)}.`,
      });
  }
  if (limits.keptOutputBytes % limits.segmentBytes !== 0 || limits.keptOutputBytes < limits.segmentBytes)
    throw new InvalidArgumentError({
      field: "processes.keptOutputBytes",
      problem: `must be a multiple of segmentBytes (${limits.segmentBytes}), got ${limits.keptOutputBytes}.`,
    });
  return limits;
}

/** Throws InvalidArgumentError unless both sides are integers from 1 to 1000. */
export function checkTerminalSize(size: TerminalSize, field: string): void {
  for (const side of ["cols", "rows"] as const) {
    const v = size[side];
    if (!Number.isSafeInteger(v) || v < 1 || v > 1000)
      throw new InvalidArgumentError({
        field: `${field}.${side}`,
        problem: `must be an integer from 1 to 1000, got ${String(v)}.`,
      });
  }
}

/** Throws PayloadTooLargeError for input over MAX_INPUT_BYTES. */
export function checkInputSize(data: Buffer): void {
  if (data.length > MAX_INPUT_BYTES)
    throw new PayloadTooLargeError(
      `Input of ${data.length} bytes exceeds the ${MAX_INPUT_BYTES}-byte limit of one write; send it in pieces or write it to a file.`,
    );
}
