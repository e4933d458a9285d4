/**
 * A bound on how deeply a tool call's arguments may nest, checked before a batch runs. The arguments
 * are the client's JSON and reach JSON.stringify (the SSE start event, approvals) and schema checks
 * that recurse: arrays nested 100,000 deep overflowed the stack there, so the call's start event was
 * lost (red team). Tool arguments nest a few levels; MAX_ARGUMENT_DEPTH leaves ample room.
 */
import { InvalidArgumentError } from "../errors.js";
import type { ToolCall } from "../tools/index.js";

/** Deepest nesting of objects and arrays in one call's arguments (the arguments object is level 1). */
export const MAX_ARGUMENT_DEPTH = 64;

/** True when `value` nests objects or arrays deeper than `limit` levels (iterative: no recursion). */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (depth > limit) return true;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

/** Throws InvalidArgumentError (HTTP 400) naming the first call whose arguments nest too deeply. */
export function checkArgumentDepth(calls: readonly ToolCall[]): void {
  const deep = calls.find((call) => nestsDeeperThan(call.arguments, MAX_ARGUMENT_DEPTH));
  if (deep) {
    throw new InvalidArgumentError(
      `Tool call '${deep.id}' has arguments nested deeper than ${MAX_ARGUMENT_DEPTH} levels; ` +
        "no call of the batch was run: send flatter arguments.",
    );
  }
}
