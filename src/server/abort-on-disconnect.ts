/** The abort signal of a request whose work must stop when its client goes away. */
import type { FastifyReply } from "fastify";

/**
 * An AbortController aborted when the client closes the connection before the response finished
 * (a finished response's own close aborts nothing). Routes pass its signal to sandbox calls, so a
 * client that disconnects frees the work it started.
 */
export function abortOnDisconnect(reply: FastifyReply): AbortController {
  const controller = new AbortController();
  reply.raw.on("close", () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller;
}
