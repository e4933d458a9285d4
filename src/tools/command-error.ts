/** The error a tool throws for a command that did not succeed, carrying the result's details. */
import { WardenError, type WardenErrorCode } from "../errors.js";

/**
 * A command that exited non-zero, was killed by a signal (128+N), timed out (124) or was aborted.
 * `message` is the model-visible text (Pi's "output + blank + status line"); `details` holds what a
 * UI needs (exit code, truncation, spill path) for pipelines that keep it.
 * Codes: TIMEOUT, ABORTED, or COMMAND_FAILED.
 */
export class CommandFailedError<TDetails = unknown> extends WardenError {
  constructor(
    code: Extract<WardenErrorCode, "TIMEOUT" | "ABORTED" | "COMMAND_FAILED">,
    message: string,
    readonly details: TDetails,
  ) {
    super(code, message);
  }
}
