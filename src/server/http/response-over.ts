/**
 * When a response is over, for what a request holds until then (a workspace-read slot, buffered
 * bytes, an abort signal). Node emits a response's `close` when its last byte was handed to the
 * socket or when the socket closed, but only for the response the socket is writing: responses of
 * pipelined requests queued behind it never get one when the client leaves (Node's
 * `_http_server.js` ends only `socket._httpMessage`; the request and the socket do get `close`).
 * An attack kept its tenant's bytes held forever that way, so the socket's `close` counts too.
 */
import type { ServerResponse } from "node:http";

/** The parts of a response this module reads (a fake in tests may have only these). */
export type ResponseLike = Pick<ServerResponse, "once" | "removeListener" | "destroyed"> & {
  closed?: boolean;
  req?: { socket?: (Pick<NodeJS.EventEmitter, "once" | "removeListener"> & { destroyed?: boolean }) | null };
};

/**
 * Calls `fn` once, when `res` closes or its request's socket does; at once when either already has
 * (a client gone during the hooks before the handler: that `close` was emitted and never comes again).
 */
export function onResponseOver(res: ResponseLike, fn: () => void): void {
  const socket = res.req?.socket ?? undefined;
  let over = false;
  const end = () => {
    if (over) return;
    over = true;
    res.removeListener("close", end);
    socket?.removeListener("close", end);
    fn();
  };
  if (res.closed || res.destroyed || socket?.destroyed) {
    end();
    return;
  }
  res.once("close", end);
  // Pipelined answers queue a listener each on one socket; each is removed when its answer is over.
  (socket as NodeJS.EventEmitter | undefined)?.setMaxListeners?.(0);
  socket?.once("close", end);
}

/**
 * Ends `res`'s connection when the client takes none of the answer's bytes for `ms` (the socket's
 * inactivity timeout, from now until this answer is finished): an answer never read would keep
 * what it holds (bytes, call slots) for as long as the client keeps the connection open. Start it
 * when the answer is about to be written, not while a call runs (a long call is silent).
 */
export function endIfStalled(res: ServerResponse, ms: number): void {
  res.setTimeout(ms, () => res.destroy());
  // Once the answer is out, the connection goes back to no timeout (the server's own, 0). This runs
  // before Node's finish handler, which then sets a kept-alive connection's idle timeout, and while
  // the response still has its socket (that handler detaches it).
  res.prependOnceListener("finish", () => res.socket?.setTimeout?.(0));
}
