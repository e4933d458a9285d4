/** The built-in tools, in Pi's registry order. Each tool lives in its own file. */
import type { AnyTool } from "./types.js";

/** Returns fresh instances of the seven built-in tools: read, bash, edit, write, grep, find, ls. */
export function builtinTools(): AnyTool[] {
  return [];
}

export type { ResolvedToolPath } from "./paths.js";
export { isWithinRoot, isWithinRoots, normalizeToolPath, resolveToolPath } from "./paths.js";
export type * from "./types.js";
