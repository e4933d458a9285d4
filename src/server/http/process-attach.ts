/**
 * One WebSocket attached to a background process (GET /v1/sessions/:id/processes/:pid/attach, the
 * route in routes/processes.ts). Server → client: a JSON text `{type:"attached", offset, process}`
 * first, then binary messages carrying the output's bytes as they come, `{type:"skipped", bytes}`
 * when output that was asked for is no longer kept, and `{type:"exit", exitCode, exitSignal}` once
 * the process has exited and all its output was sent, then a close (1000). Client → server: binary
 * messages are input bytes; JSON texts `{type:"resize", cols, rows}`, `{type:"signal", signal}` and
 * `{type:"eof"}`; a request that fails is answered `{type:"error", code, message}` and the socket
 * stays open. Output is read with Processes.read: again at once while it flows, every POLL_MS when
 * idle, and not while more than MAX_BUFFERED_BYTES wait in the socket (a slow client makes the
 * server read less, never hold more). docs/processes.md describes the protocol.
 */
import type { WebSocket } from "ws";
import { InvalidArgumentError, WardenError } from "../../errors.js";
import type { Processes, ProcessInfo, ProcessSignal } from "../../process/index.js";
import { toErrorResponse } from "./errors.js";

/** Wait between reads while the process writes nothing, in ms. */
const POLL_MS = 40;
/** Output read at once (one binary message at most). */
const READ_BYTES = 64 * 1024;
/** Bytes queued in the socket above which no more output is read. */
const MAX_BUFFERED_BYTES = 1024 * 1024;
/** Close code sent when the session closes under the socket (1001: going away). */
const SESSION_CLOSED_CODE = 1001;

/** What an attached socket works on. */
export interface AttachTarget {
  processes: Processes;
  pid: string;
  /** Where output starts (checked against the output's length by the caller). */
  offset: number;
  /** The process when the socket opened, as the `attached` message carries it. */
  attached: unknown;
  /** Notes the session's activity (each message from the client). */
  touch: () => void;
  /** Subscribes to the session's removal; returns the unsubscribe. */
  onSessionClosed: (listener: () => void) => () => void;
  /** Called once when the socket has closed, with the output bytes it sent. */
  onClosed: (bytesSent: number) => void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Applies one JSON text message of the client (see the file comment). */
async function applyControl(processes: Processes, pid: string, text: string): Promise<void> {
  let message: { type?: unknown; cols?: unknown; rows?: unknown; signal?: unknown };
  try {
    message = JSON.parse(text) as typeof message;
  } catch {
    throw new InvalidArgumentError("A text message must be JSON: {type: resize|signal|eof, …}.");
  }
  switch (message?.type) {
    case "resize":
      if (typeof message.cols !== "number" || typeof message.rows !== "number")
        throw new InvalidArgumentError("A resize message needs numbers cols and rows.");
      return processes.resize(pid, { cols: message.cols, rows: message.rows });
    case "signal":
      // Processes.kill refuses a name it does not know (InvalidArgumentError naming the field).
      return processes.kill(pid, (message.signal ?? "TERM") as ProcessSignal);
    case "eof":
      return processes.closeInput(pid);
    default:
      throw new InvalidArgumentError(
        `Unknown message type ${JSON.stringify(message?.type)}; send resize, signal or eof (input goes in binary messages).`,
      );
  }
}

/** The exit message of an exited process. */
function exitMessage(p: ProcessInfo) {
  return { type: "exit", exitCode: p.exitCode ?? null, exitSignal: p.exitSignal ?? null };
}

/**
 * Runs the protocol on an open socket until the process has exited and its output was sent, the
 * client closes, or the session closes (close code 1001). A read that fails otherwise closes the
 * socket with 1011 and the error's message.
 */
export function attachSocket(socket: WebSocket, target: AttachTarget): void {
  const { processes, pid } = target;
  let open = true;
  const sent = { bytes: 0 };
  const stopWatching = target.onSessionClosed(() => {
    if (open) socket.close(SESSION_CLOSED_CODE, "session closed");
  });
  socket.on("close", () => {
    open = false;
    stopWatching();
    target.onClosed(sent.bytes);
  });

  // Requests of the client, applied one at a time in the order they came.
  let requests = Promise.resolve();
  socket.on("message", (data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean) => {
    target.touch();
    const bytes = Buffer.isBuffer(data)
      ? data
      : Array.isArray(data)
        ? Buffer.concat(data)
        : Buffer.from(data);
    requests = requests.then(async () => {
      try {
        if (isBinary) {
          if (bytes.length > 0) await processes.write(pid, bytes);
        } else await applyControl(processes, pid, bytes.toString("utf8"));
      } catch (err) {
        const { body } = toErrorResponse(err);
        if (open) socket.send(JSON.stringify({ type: "error", ...body }));
      }
    });
  });

  socket.send(JSON.stringify({ type: "attached", offset: target.offset, process: target.attached }));
  void pump(socket, processes, pid, target.offset, () => open, sent);
}

/** Sends output from `offset` while `isOpen()` (see the file comment). */
async function pump(
  socket: WebSocket,
  processes: Processes,
  pid: string,
  from: number,
  isOpen: () => boolean,
  sent: { bytes: number },
): Promise<void> {
  let offset = from;
  try {
    while (isOpen()) {
      if (socket.bufferedAmount > MAX_BUFFERED_BYTES) {
        await sleep(POLL_MS);
        continue;
      }
      const slice = await processes.read(pid, { offset, maxBytes: READ_BYTES });
      if (!isOpen()) return;
      if (slice.skipped > 0) socket.send(JSON.stringify({ type: "skipped", bytes: slice.skipped }));
      offset = slice.nextOffset;
      if (slice.data.length > 0) {
        socket.send(slice.data, { binary: true });
        sent.bytes += slice.data.length;
        continue;
      }
      if (slice.process.state === "exited") {
        socket.send(JSON.stringify(exitMessage(slice.process)));
        socket.close(1000, "exited");
        return;
      }
      await sleep(POLL_MS);
    }
  } catch (err) {
    if (!isOpen()) return;
    const message = err instanceof WardenError ? `${err.code}: ${err.message}` : String(err);
    // A close reason is at most 123 bytes.
    socket.close(1011, Buffer.from(message).subarray(0, 120).toString("utf8"));
  }
}
