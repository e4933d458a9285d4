/**
 * Background processes of a session (issue 41): start, output from any offset, input, signals,
 * terminal size, wait, and adoption after a controller restart. See types.ts and docs/processes.md.
 */

export { openProcesses, type ProcessesOptions } from "./manager.js";
export * from "./types.js";
