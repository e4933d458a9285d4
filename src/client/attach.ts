/**
 * A WebSocket attached to a background process (GET /v1/sessions/:id/processes/:pid/attach), on
 * the platform's global WebSocket: output arrives as bytes, input, a terminal size, a signal and
 * the end of input go the other way, and `exited` resolves with the exit status (or null when the
 * socket closed without one: detached, or the session closed). The protocol: docs/processes.md.
 */
import { WardenApiError } from "./errors.js";
import type { BackgroundProcess, ProcessSignalName } from "./types.js";

/** How the process ended, as the server's last message says. */
export interface AttachExit {
  exitCode: number | null;
  exitSignal: number | null;
}

/** What to do with what the server sends. */
export interface AttachHandlers {
  /** Output bytes, in order. */
  onOutput?: (data: Uint8Array) => void;
  /** Output asked for that was no longer kept (the stream goes on after it). */
  onSkipped?: (bytes: number) => void;
  /** A request of this side failed (e.g. input after the exit): the server's `{code, message}`. */
  onError?: (error: WardenApiError) => void;
}

/** Opens the socket; `path` is the route's, `query` its query (WardenClient fills in URL and key). */
export type AttachConnect = (path: string, query: Record<string, string>) => WebSocket;

/** An open attachment (see the file comment). */
export interface ProcessAttachment {
  /** The process when the socket opened. */
  readonly process: BackgroundProcess;
  /** The output offset the stream started at. */
  readonly offset: number;
  /** Resolves with the exit status once the process has ended; null when the socket closed first. */
  readonly exited: Promise<AttachExit | null>;
  /** Sends input bytes (a string as UTF-8). */
  write(data: string | Uint8Array): void;
  /** Changes the terminal's size. */
  resize(size: { cols: number; rows: number }): void;
  /** Sends a signal (default TERM) to its process group. */
  signal(signal?: ProcessSignalName): void;
  /** Closes its stdin (under a terminal: ^D). */
  eof(): void;
  /** Detaches: closes the socket; the process keeps running. */
  close(): void;
}

interface ServerMessage {
  type?: string;
  offset?: number;
  process?: BackgroundProcess;
  bytes?: number;
  exitCode?: number | null;
  exitSignal?: number | null;
  code?: string;
  message?: string;
}

/**
 * Opens the socket and resolves once the server said `attached`. A refused upgrade reports no
 * status to a WebSocket, so `explain` is then asked why (it rejects with the server's error, e.g.
 * NotFoundError); when it finds none, the socket's failure is the rejection.
 */
export function openAttachment(
  socket: WebSocket,
  handlers: AttachHandlers,
  explain: () => Promise<unknown>,
): Promise<ProcessAttachment> {
  socket.binaryType = "arraybuffer";
  let resolveExit: (exit: AttachExit | null) => void = () => undefined;
  const exited = new Promise<AttachExit | null>((r) => {
    resolveExit = r;
  });
  let exit: AttachExit | null = null;
  const sendJson = (value: unknown) => {
    if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(value));
  };
  return new Promise<ProcessAttachment>((resolve, reject) => {
    let attached = false;
    socket.addEventListener("message", (event) => {
      if (typeof event.data !== "string") {
        handlers.onOutput?.(new Uint8Array(event.data as ArrayBuffer));
        return;
      }
      const m = JSON.parse(event.data) as ServerMessage;
      if (m.type === "attached" && m.process && m.offset !== undefined) {
        attached = true;
        resolve({
          process: m.process,
          offset: m.offset,
          exited,
          write: (data) => {
            if (socket.readyState === socket.OPEN)
              socket.send(typeof data === "string" ? new TextEncoder().encode(data) : data);
          },
          resize: (size) => sendJson({ type: "resize", ...size }),
          signal: (signal = "TERM") => sendJson({ type: "signal", signal }),
          eof: () => sendJson({ type: "eof" }),
          close: () => socket.close(1000, "detached"),
        });
      } else if (m.type === "skipped") handlers.onSkipped?.(m.bytes ?? 0);
      else if (m.type === "exit") exit = { exitCode: m.exitCode ?? null, exitSignal: m.exitSignal ?? null };
      else if (m.type === "error")
        handlers.onError?.(new WardenApiError(m.code ?? "INTERNAL", 0, m.message ?? "request failed"));
    });
    socket.addEventListener("close", (event) => {
      resolveExit(exit);
      if (attached) return;
      explain().then(
        () =>
          reject(
            new WardenApiError(
              "ATTACH_FAILED",
              0,
              `The attach socket closed before it opened (code ${event.code}${event.reason ? `: ${event.reason}` : ""}).`,
            ),
          ),
        reject,
      );
    });
  });
}
