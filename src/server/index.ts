/** `warden serve`: the multi-tenant HTTP API. Its public surface for the CLI (the client takes the route schemas type-only). */

export { runServe } from "./run-serve.js";
export { hashKey } from "./tenancy/index.js";
