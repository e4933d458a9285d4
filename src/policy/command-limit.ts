/**
 * The bound on the bash commands a policy analyses (issue 11, item 2): a command over it is refused
 * before it is parsed, so no call can hold the event loop or grow the parser's WASM heap (which
 * never shrinks) beyond what a command at the limit needs.
 *
 * Why these numbers: Linux passes one argv string of at most MAX_ARG_STRLEN = 32 pages = 131072
 * bytes including its NUL, and the sandbox runs a command as one `bash -c` argument (Pi does the
 * same on the host), so a longer command could never run anyway (E2BIG, "Argument list too long").
 * Real agent commands are far shorter (the longest in a 192-call Pi session is 1.4 KB); long file
 * content belongs in the write tool. The default keeps the worst case (a script of thousands of tiny
 * commands) within the analysis budget measured by `npm run bench` (policy section).
 */
import { InvalidArgumentError } from "../errors.js";
import { MAX_BASH_COMMAND_BYTES } from "../tools/index.js";
import type { Policy } from "./types.js";

/**
 * Default `maxCommandBytes`, in UTF-8 bytes: 8 KiB, 5.8× the longest command of a real 192-call Pi
 * session. Analysis time grows with the number of simple commands, about 7-15 µs of CPU each: a
 * script of one-letter commands (`a;a;…`, the most parts per byte) of 16 KiB took ~120 ms of CPU on a
 * loaded 2-core machine, so the default is half that; a here-doc of the same size takes under 1 ms
 * (bench: policy section).
 */
export const DEFAULT_MAX_COMMAND_BYTES = 8_192;

/** A bash command longer than the policy analyses (code INVALID_ARGUMENT). */
export class CommandTooLongError extends InvalidArgumentError {
  constructor(
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(
      `bash command is ${bytes} bytes, over the policy limit maxCommandBytes = ${limit} bytes. ` +
        "Split it into shorter commands, or write long content with the write tool; an operator " +
        `can raise the limit with \`maxCommandBytes:\` in a policy file (at most ${MAX_BASH_COMMAND_BYTES}, ` +
        "the longest command the sandbox can run).",
    );
  }
}

/** The limit of `policy`: the smallest `maxCommandBytes` of its layers, else the default. */
export function maxCommandBytes(policy: Policy): number {
  let limit: number | undefined;
  for (const layer of policy.layers) {
    if (layer.maxCommandBytes !== undefined) limit = Math.min(limit ?? Infinity, layer.maxCommandBytes);
  }
  return limit ?? DEFAULT_MAX_COMMAND_BYTES;
}

/** Throws CommandTooLongError when `command` is longer than `limit` UTF-8 bytes. */
export function checkCommandSize(command: string, limit: number): void {
  // A UTF-16 unit is at most 3 UTF-8 bytes: short commands need no count.
  if (command.length * 3 <= limit) return;
  const bytes = Buffer.byteLength(command, "utf8");
  if (bytes > limit) throw new CommandTooLongError(bytes, limit);
}
