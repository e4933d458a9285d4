/**
 * REST's check of the argument depth bound (src/pipeline/argument-depth.ts) before a batch runs: a
 * batch with one call past it is refused whole (HTTP 400).
 */
import { InvalidArgumentError } from "../../errors.js";
import { argumentDepthMessage, MAX_ARGUMENT_DEPTH, nestsDeeperThan } from "../../pipeline/index.js";
import type { ToolCall } from "../../tools/index.js";

export { MAX_ARGUMENT_DEPTH };

/** Throws InvalidArgumentError (HTTP 400) naming the first call whose arguments nest too deeply. */
export function checkArgumentDepth(calls: readonly ToolCall[]): void {
  const deep = calls.find((call) => nestsDeeperThan(call.arguments, MAX_ARGUMENT_DEPTH));
  if (deep) throw new InvalidArgumentError(argumentDepthMessage(deep.id, "no call of the batch was run"));
}
