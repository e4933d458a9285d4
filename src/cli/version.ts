/** warden's version (src/version.ts), as the CLI prints it. */
export { WARDEN_VERSION } from "../version.js";
