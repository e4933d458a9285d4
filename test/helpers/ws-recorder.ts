/**
 * A `ws` client for attach tests that records what the server sends: JSON text messages parsed,
 * binary messages joined as text, the close code, or the status of a refused upgrade.
 */
import WebSocket from "ws";

/** What one socket received so far. */
export interface WsRecording {
  socket: WebSocket;
  /** The JSON text messages, in order. */
  messages: Record<string, unknown>[];
  /** The binary messages joined, as UTF-8. */
  output: () => string;
  /** Resolves with the close code and reason. */
  closed: Promise<{ code: number; reason: string }>;
}

/** Opens a socket to `url` with the bearer `key`; resolves once open, rejects with the refusal. */
export function openRecorded(url: string, key: string): Promise<WsRecording> {
  const socket = new WebSocket(url, { headers: { authorization: `Bearer ${key}` } });
  const messages: Record<string, unknown>[] = [];
  const chunks: Buffer[] = [];
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    socket.on("close", (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  socket.on("message", (data: Buffer, isBinary) => {
    if (isBinary) chunks.push(data);
    else messages.push(JSON.parse(data.toString()) as Record<string, unknown>);
  });
  return new Promise((resolve, reject) => {
    socket.once("open", () =>
      resolve({ socket, messages, output: () => Buffer.concat(chunks).toString("utf8"), closed }),
    );
    socket.once("error", reject);
  });
}

/** The status and JSON body with which the server refused the upgrade to `url`. */
export function refusedUpgrade(url: string, key: string): Promise<{ status: number; body: unknown }> {
  const socket = new WebSocket(url, { headers: { authorization: `Bearer ${key}` } });
  return new Promise((resolve, reject) => {
    socket.once("open", () => {
      socket.close();
      reject(new Error(`${url} was upgraded`));
    });
    socket.once("unexpected-response", (_req, res) => {
      let text = "";
      res.on("data", (c: Buffer) => {
        text += c.toString();
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    socket.once("error", () => undefined);
  });
}
