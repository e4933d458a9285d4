/**
 * The listener's connections: caps on how many are open, and closing the rest at shutdown.
 *
 * A request's tenant is known only once its headers are parsed, and a connection costs memory
 * before that (3,000 sockets left with unfinished headers grew a server by 72 MiB), so the caps
 * count sockets: `maxConnections` in all and `maxConnectionsPerClient` per client (clientOf). A
 * connection over either is answered at once with a fixed 503 naming the field and
 * `Connection: close`, then closed: Node's HTTP server never sees it, so nothing it sent is parsed.
 *
 * At shutdown a connection is idle, and closed at once, when Node's closeIdleConnections (which its
 * server.close calls) finds it so (no request being received, no answer being written) and no answer
 * on it is still unsent: Node's own check also cut an answer that was ended but not yet handed to
 * the kernel (a 32 MiB file read slowly got 3.9 MiB), so the server's is wrapped to spare those.
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { ServerMetrics } from "../metrics.js";
import { rawJsonResponse } from "./client-errors.js";

/** The two caps (config/defaults.ts), connections. */
export interface ConnectionCaps {
  maxConnections: number;
  maxConnectionsPerClient: number;
}

type CapField = keyof ConnectionCaps;

/**
 * Puts the caps in front of `server`'s own `connection` listeners (Node's HTTP parser) and makes
 * its closeIdleConnections also spare connections with an answer not yet handed to the kernel;
 * call it before the server listens. An admitted socket is counted (warden_connections) until its
 * `close`, which Node emits once however it ends (end, error, reset, destroy); a refused one is
 * counted in warden_connections_refused_total under the field.
 */
export function trackConnections(
  server: Server,
  caps: ConnectionCaps,
  metrics: Pick<ServerMetrics, "connections" | "connectionsRefused">,
): void {
  const perClient = new Map<string, number>();
  const open = new Set<Socket>();
  // Requests per socket whose answer has not closed, from documented events rather than Node's
  // socket._httpMessage: a response's 'close' comes after its 'finish', the hand-over to the kernel.
  const unsent = new Map<Socket, number>();
  server.prependListener("request", (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket;
    unsent.set(socket, (unsent.get(socket) ?? 0) + 1);
    response.once("close", () => {
      const left = (unsent.get(socket) ?? 1) - 1;
      if (left > 0) unsent.set(socket, left);
      else unsent.delete(socket);
    });
  });
  const closeIdle = server.closeIdleConnections.bind(server);
  server.closeIdleConnections = () => {
    // Node's check keeps its idea of idle (a connection whose next request has begun to arrive is
    // spared, to get its answer: "a connection whose request headers are still arriving …" in
    // connections.test.ts) and ends each idle socket with socket.destroy(), shadowed here for the
    // call on the sockets with an unsent answer. That is how Node 20 does it, not a documented API:
    // if an upgrade ends them otherwise, this fails safe to Node's own check, which cuts only ended
    // unsent answers, and "an answer being sent when shutdown starts is not cut" (the 32 MiB file
    // read during the grace; 3.9 MiB arrive without the shadowing) fails.
    const spared = [...unsent.keys()];
    for (const socket of spared) socket.destroy = keep;
    try {
      closeIdle();
    } finally {
      for (const socket of spared) delete (socket as Partial<Socket>).destroy;
    }
  };
  const parsers = server.listeners("connection") as ((socket: Socket) => void)[];
  server.removeAllListeners("connection");
  server.on("connection", (socket: Socket) => {
    const client = clientOf(socket.remoteAddress);
    const ofClient = perClient.get(client) ?? 0;
    const over: CapField | undefined =
      open.size >= caps.maxConnections
        ? "maxConnections"
        : ofClient >= caps.maxConnectionsPerClient
          ? "maxConnectionsPerClient"
          : undefined;
    if (over) {
      metrics.connectionsRefused.inc({ cap: over });
      refuse(socket, over, caps[over]);
      return;
    }
    open.add(socket);
    perClient.set(client, ofClient + 1);
    metrics.connections.inc();
    socket.once("close", () => {
      open.delete(socket);
      unsent.delete(socket); // an answer queued behind a pipelined one may never get its 'close'
      const left = (perClient.get(client) ?? 1) - 1;
      if (left > 0) perClient.set(client, left);
      else perClient.delete(client); // no entry kept for an address that left
      metrics.connections.dec();
    });
    for (const parse of parsers) parse.call(server, socket);
  });
}

/**
 * The client a connection counts against: its IPv4 address (an IPv4-mapped IPv6 one, ::ffff:a.b.c.d,
 * as IPv4), or its IPv6 address's /64 network, which one host or site is routinely given whole
 * (RFC 6177): counted by address, 300 connections from one /64 all got in under a cap of 4. "" when
 * the socket has no address (it is already closed).
 */
export function clientOf(address: string | undefined): string {
  if (address === undefined) return "";
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1] ?? address;
  if (!address.includes(":")) return address;
  return `${ipv6Groups(address).slice(0, 4).join(":")}::/64`;
}

/** The eight 16-bit groups of an IPv6 address (its zone id dropped), lower-case hex without leading zeros. */
function ipv6Groups(address: string): string[] {
  const bare = address.split("%")[0] ?? "";
  const [head = "", tail] = bare.split("::");
  const part = (s: string) => (s === "" ? [] : s.split(":"));
  const left = part(head);
  const right = tail === undefined ? [] : part(tail);
  const groups = [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right];
  return groups.map((g) => (g.includes(".") ? g : Number.parseInt(g, 16).toString(16)));
}

/** What a spared socket's destroy does while Node's closeIdleConnections runs: nothing. */
function keep(this: Socket): Socket {
  return this;
}

/** Writes the 503 and closes the socket once it is handed to the kernel (never waiting on the peer). */
function refuse(socket: Socket, field: CapField, cap: number): void {
  // Nothing else listens on this socket: a reset by the peer must not become an uncaught error.
  socket.on("error", () => {});
  const message =
    field === "maxConnections"
      ? `The server has maxConnections (${cap}) connections open; retry later, or raise maxConnections in the server config.`
      : `This address has maxConnectionsPerClient (${cap}) connections open to the server; close one or retry later, or raise maxConnectionsPerClient in the server config.`;
  socket.end(
    rawJsonResponse("503 Service Unavailable", { code: "NO_ROOM", message }, ["Retry-After: 1"]),
    () => socket.destroy(),
  );
}

/**
 * Waits until `done()` or `deadline` (ms since the epoch), checking every 50 ms and closing the
 * idle connections each time, so a kept-alive one is closed as soon as its answer is sent.
 */
export async function drainUntil(server: Server, done: () => boolean, deadline: number): Promise<void> {
  for (;;) {
    server.closeIdleConnections();
    const left = deadline - Date.now();
    if (done() || left <= 0) return;
    await new Promise((r) => setTimeout(r, Math.min(50, left)));
  }
}
