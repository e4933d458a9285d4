/**
 * The bound on how deeply a tool call's arguments may nest, the same for every way a call comes in
 * (`warden serve`'s REST batches, src/server/http/call-arguments.ts; MCP tools/call, src/mcp/tool-server.ts).
 * The arguments are the client's JSON and reach JSON.stringify (the SSE start event, approvals) and
 * schema checks that recurse: arrays nested 100,000 deep overflowed the stack there (red team).
 * Tool arguments nest a few levels; MAX_ARGUMENT_DEPTH leaves ample room.
 */

/** Deepest nesting of objects and arrays in one call's arguments (the arguments object is level 1). */
export const MAX_ARGUMENT_DEPTH = 64;

/** True when `value` nests objects or arrays deeper than `limit` levels (iterative: no recursion). */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (v === null || typeof v !== "object") continue;
    if (depth > limit) return true;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * The message refusing call `id` whose arguments nest deeper than MAX_ARGUMENT_DEPTH (REST and MCP);
 * `outcome` says what did not run ("no call of the batch was run").
 */
export function argumentDepthMessage(id: string, outcome: string): string {
  return (
    `Tool call '${id}' has arguments nested deeper than ${MAX_ARGUMENT_DEPTH} levels; ` +
    `${outcome}: send flatter arguments.`
  );
}
