/** The abort signal of a request whose work must stop when its client goes away. */
import type { FastifyReply } from "fastify";
import { onResponseOver } from "./response-over.js";

/**
 * An AbortController aborted when the client closes the connection before the response finished
 * (a finished response's own close aborts nothing), also for a response queued behind a pipelined
 * one (response-over.ts). Routes pass its signal to sandbox calls, so a client that disconnects
 * frees the work it started.
 */
export function abortOnDisconnect(reply: FastifyReply): AbortController {
  const controller = new AbortController();
  onResponseOver(reply.raw, () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller;
}
