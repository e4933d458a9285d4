/**
 * Background processes of a session (issue 41): start, output from any offset, input, signals,
 * terminal size, wait, and adoption after a controller restart. See types.ts and docs/processes.md.
 */

export { PROCS_DIR } from "./files.js";
export { DEFAULT_PROCESS_LIMITS, MAX_INPUT_BYTES, resolveProcessLimits } from "./limits.js";
export { commandLine, openProcesses, type ProcessesOptions } from "./manager.js";
export * from "./types.js";
