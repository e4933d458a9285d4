/**
 * The channel's fast transport on Docker: a unix socket the controller listens on, in the
 * sandbox's own host directory (socket-dir.ts), bind-mounted read-only at CHANNEL_SOCKET_DIR. The
 * channel opens on the attach stream (attach.ts), where every frame passes dockerd and
 * containerd-shim each way; a `switch` request then moves it onto the socket, one hop from the
 * controller to the helper (images/sandbox/helper/socket.go). Under load from other sessions,
 * each process a frame must wake adds its scheduling delay: this is what keeps a session's round
 * trip short (docs/benchmarks.md, noisy neighbour).
 *
 * Trust: only the sandbox's gid may enter the directory (socket-dir.ts); the token travels on the
 * attach stream, which only the controller and the non-dumpable helper hold, and the controller
 * serves only the connection that presents it, then stops listening. When the helper cannot
 * switch (an old helper, no mount, a uid the engine maps elsewhere, gVisor without host sockets)
 * the channel stays on the attach stream, which is as safe, and the reason is logged.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { chmod, rm } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { SandboxError } from "../../../errors.js";
import type { ChannelClient, ChannelTransport } from "../../channel/protocol/client.js";
import { FrameType } from "../../channel/protocol/frame.js";
import type { SwitchableTransport } from "../../channel/protocol/switchable.js";
import { assertOnlyOursPath } from "./socket-dir.js";

const SOCKET_NAME = "channel.sock";

/** How long the switch may take (listen, the helper's connect and token, its answer), ms. */
export const SWITCH_TIMEOUT_MS = 5000;

/** The first helper version that serves `switch` (images/sandbox/helper/main.go). */
export const SWITCH_HELPER_VERSION = 6;

/** Token length in bytes (sent as hex). */
const TOKEN_BYTES = 32;

/** Connections waiting to present a token at once; a newer one evicts the oldest. */
const MAX_PENDING_CONNECTIONS = 8;

/** Logs why a sandbox's channel stays on the attach stream (a process warning, code WARDEN_CHANNEL_ATTACH). */
export function warnChannelOnAttach(message: string): void {
  process.emitWarning(message, { code: "WARDEN_CHANNEL_ATTACH" });
}

/**
 * Wraps a connected unix socket as a ChannelTransport (frames both ways, nothing else). A socket
 * that closed before `start` closes the channel at `start`.
 */
export function unixSocketTransport(socket: Socket): ChannelTransport {
  let closed = false;
  socket.pause();
  return {
    name: "socket",
    write(chunk) {
      if (!closed) socket.write(chunk);
    },
    start(sinks) {
      const end = (reason: string) => {
        if (closed) return;
        closed = true;
        socket.destroy();
        sinks.onClose(reason);
      };
      socket.on("data", (chunk: Buffer) => sinks.onData(chunk));
      socket.on("end", () => end("the helper closed the channel socket (container stopped?)"));
      socket.on("close", () => end("the channel socket closed"));
      socket.on("error", (err: Error) => end(`channel socket error: ${err.message}`));
      if (socket.destroyed) return end("the channel socket closed before the channel moved onto it");
      socket.resume();
    },
    close() {
      if (!closed) socket.destroy(); // onClose follows, from the socket's close event
    },
    pause: () => socket.pause(),
    resume() {
      if (!closed) socket.resume();
    },
  };
}

/**
 * Moves `client`'s channel (on `transport`) onto a socket in `hostDir`: listens there, sends the
 * `switch` request with a fresh token, and waits for the connection that presents it.
 * Resolves true when the channel runs on the socket; false (the reason logged) when it stays on
 * `transport` and works: the listener could not be set up, or the helper refused the switch (its
 * error frame: no socket in the container, connect refused). Rejects, and the caller closes the
 * channel, when its state is unknown: SandboxError when the helper did not answer within
 * SWITCH_TIMEOUT_MS or answered but no connection presented the token in that time; the client's
 * own error when the channel closed meanwhile. Nothing outlives the call but the handed-over
 * connection: the listener, its socket file and every other connection are gone either way.
 */
export async function moveToSocket(
  client: ChannelClient,
  transport: SwitchableTransport,
  hostDir: string,
  log: (message: string) => void,
): Promise<boolean> {
  const token = randomBytes(TOKEN_BYTES).toString("hex");
  const path = join(hostDir, SOCKET_NAME);
  const deadline = AbortSignal.timeout(SWITCH_TIMEOUT_MS);
  const listener = listenForToken(token);
  let checked = false;
  try {
    try {
      // Nobody else may have swapped anything on the way (an adopted sandbox's directory, too).
      await assertOnlyOursPath(hostDir);
      checked = true;
      await rm(path, { force: true });
      await listener.listen(path);
      // connect(2) needs write permission on the socket; its directory (0710, group = the
      // sandbox's gid) is what keeps every other sandbox and host user out.
      await chmod(path, 0o666);
    } catch (err) {
      log(`channel stays on the attach stream: cannot listen on ${path} (${(err as Error).message})`);
      return false;
    }
    try {
      // The helper connects and writes the token before it answers (helper/socket.go).
      await client.call(
        FrameType.switch,
        Buffer.from(JSON.stringify({ token })),
        "switching the channel to",
        path,
        deadline,
      );
    } catch (err) {
      if (client.closed) throw err;
      if (deadline.aborted)
        throw new SandboxError(
          `warden-helper did not answer the channel switch within ${SWITCH_TIMEOUT_MS} ms.`,
        );
      log(`channel stays on the attach stream: ${(err as Error).message}`);
      return false;
    }
    transport.moveTo(unixSocketTransport(await listener.accepted(deadline)));
    // The socket (or the attach stream, before the move) may have closed meanwhile: never hand
    // back a closed channel as a working one.
    if (client.closed) throw client.closedError();
    return true;
  } finally {
    // Never a path that failed the check: it may lead anywhere.
    await listener.close(checked ? path : undefined);
  }
}

/**
 * A listening socket that hands over the first connection whose first line is `token` and
 * destroys every other one (at most MAX_PENDING_CONNECTIONS wait at once, the oldest goes first,
 * each for at most SWITCH_TIMEOUT_MS). `close` stops listening, removes the socket file and destroys what was not
 * handed over, also a connection that presents the token later.
 */
function listenForToken(token: string) {
  const server: Server = createServer({ pauseOnConnect: true });
  server.on("error", () => {}); // a failed listen is reported by `listen`; nothing else matters here
  const expected = Buffer.from(`${token}\n`);
  const waiting = new Set<Socket>();
  let handedOver: Socket | undefined;
  let taken = false;
  let closed = false;
  let onMatch: (socket: Socket) => void = () => {};
  const matched = new Promise<Socket>((resolve) => {
    onMatch = resolve;
  });
  server.on("connection", (socket: Socket) => {
    if (closed || handedOver) return void socket.destroy();
    // Evict, never refuse: idle strangers (a host process whose subordinate ids cover the
    // sandbox's gid) cannot keep the helper's own connection out; it writes its token at once.
    const oldest = waiting.size >= MAX_PENDING_CONNECTIONS ? waiting.values().next().value : undefined;
    if (oldest) {
      waiting.delete(oldest);
      oldest.destroy();
    }
    waiting.add(socket);
    let got = Buffer.alloc(0);
    const timer = setTimeout(() => socket.destroy(), SWITCH_TIMEOUT_MS);
    socket.on("close", () => {
      clearTimeout(timer);
      waiting.delete(socket);
    });
    socket.on("error", () => socket.destroy());
    const onData = (chunk: Buffer) => {
      got = Buffer.concat([got, chunk]);
      if (got.length < expected.length) return;
      clearTimeout(timer);
      socket.off("data", onData);
      socket.pause();
      if (closed || handedOver || !timingSafeEqual(got.subarray(0, expected.length), expected))
        return void socket.destroy();
      const rest = got.subarray(expected.length);
      if (rest.length > 0) socket.unshift(rest);
      waiting.delete(socket);
      handedOver = socket;
      onMatch(socket);
    };
    socket.on("data", onData);
    socket.resume();
  });
  return {
    listen: (path: string) =>
      new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(path, () => {
          server.off("error", reject);
          resolve();
        });
      }),
    /** The handed-over connection; rejects SandboxError once `deadline` fires first. */
    accepted: (deadline: AbortSignal) =>
      new Promise<Socket>((resolve, reject) => {
        const fail = () =>
          reject(
            new SandboxError(
              `warden-helper answered the channel switch, but no connection presented its token within ${SWITCH_TIMEOUT_MS} ms.`,
            ),
          );
        if (deadline.aborted) return fail();
        deadline.addEventListener("abort", fail, { once: true });
        void matched.then((socket) => {
          if (deadline.aborted) return;
          deadline.removeEventListener("abort", fail);
          taken = true;
          resolve(socket);
        });
      }),
    /** Stops everything; removes the socket file at `path` when given. */
    async close(path: string | undefined) {
      closed = true;
      server.close();
      for (const socket of waiting) socket.destroy();
      if (handedOver && !taken) handedOver.destroy();
      if (path) await rm(path, { force: true }).catch(() => {});
    },
  };
}
