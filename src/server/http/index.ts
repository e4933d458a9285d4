/** The server's HTTP API: the fastify app with every route group, and the connection drain of shutdown. */

export { buildApp } from "./app.js";
export { drainUntil } from "./connections.js";
export type { App, ServerContext } from "./route-context.js";
