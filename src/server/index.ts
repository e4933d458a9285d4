/** `warden serve`: the multi-tenant HTTP API. Its public surface for the CLI (the client takes the route schemas type-only). */
export { hashKey } from "./auth.js";
export { runServe } from "./run-serve.js";
