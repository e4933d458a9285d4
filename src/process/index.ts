/** Background processes of a session (issue 41): the Processes contract (types.ts). */
export type * from "./types.js";
export { PROCESS_SIGNALS } from "./types.js";
