/** The built-in tools, in Pi's registry order. Each tool lives in its own file. */
import { createBashTool } from "./bash.js";
import { createEditTool } from "./edit.js";
import { createFindTool } from "./find.js";
import { createGrepTool } from "./grep.js";
import { createLsTool } from "./ls.js";
import { createProcessTool } from "./process.js";
import { createReadTool } from "./read.js";
import type { AnyTool } from "./types.js";
import { createWriteTool } from "./write.js";

/** Names of the seven built-in tools, in Pi's registry order (the order of builtinTools()). */
export const BUILTIN_TOOL_NAMES: readonly string[] = ["read", "bash", "edit", "write", "grep", "find", "ls"];

/** Returns fresh instances of the seven built-in tools: read, bash, edit, write, grep, find, ls. */
export function builtinTools(): AnyTool[] {
  return [
    createReadTool(),
    createBashTool(),
    createEditTool(),
    createWriteTool(),
    createGrepTool(),
    createFindTool(),
    createLsTool(),
  ];
}

/**
 * Names of warden's own tools that a session has only when its tool selection's `tools` names them
 * (never by default; not among Pi's seven): the process tool.
 */
export const OPT_IN_TOOL_NAMES: readonly string[] = ["process"];

/** Returns fresh instances of the opt-in tools (OPT_IN_TOOL_NAMES), one set per session. */
export function optInTools(): AnyTool[] {
  return [createProcessTool()];
}

export { createBashTool, MAX_BASH_COMMAND_BYTES } from "./bash.js";

export { createEditTool } from "./edit.js";
export { createFindTool } from "./find.js";
export { createGrepTool } from "./grep.js";
export { createLsTool } from "./ls.js";

export {
  isWithinRoot,
  normalizeToolPath,
  readPathVariants,
} from "./paths.js";
export { createProcessTool } from "./process.js";
export { createReadTool } from "./read.js";
export { existingVariant } from "./read-sandbox-file.js";
export { SPILL_HANDLE_PREFIX, spillHandle } from "./spill-handle.js";
export type * from "./types.js";
export { createWriteTool } from "./write.js";
