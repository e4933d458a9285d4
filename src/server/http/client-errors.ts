/**
 * Answers to requests Node's HTTP parser refuses before any route sees them, in the server's
 * `{code, message}` shape: a request not sent within httpRequestTimeoutMs (408, naming the field),
 * headers too large (431) or a malformed request (400). The connection is then closed. Nothing is
 * written when a response has begun on it (its bytes would corrupt that one) or the peer is gone.
 */
import type { Socket } from "node:net";

/** A fastify `clientErrorHandler` for a server whose request timeout is `httpRequestTimeoutMs` (ms). */
export function clientErrorHandler(httpRequestTimeoutMs: number) {
  return (err: Error & { code?: string }, socket: Socket): void => {
    const inProgress = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (err.code !== "ECONNRESET" && socket.writable && !inProgress?.headersSent) {
      const [status, body] = answerTo(err.code, httpRequestTimeoutMs);
      socket.write(rawJsonResponse(status, body));
    }
    socket.destroy(err);
  };
}

/**
 * A whole HTTP/1.1 response with a JSON body and `Connection: close`, for a socket no request
 * object was made for: `status` is the status line's tail (e.g. "503 Service Unavailable"),
 * `headers` extra header lines (e.g. "Retry-After: 1").
 */
export function rawJsonResponse(
  status: string,
  body: { code: string; message: string },
  headers: string[] = [],
): string {
  const json = JSON.stringify(body);
  const head = [
    `HTTP/1.1 ${status}`,
    "Content-Type: application/json",
    `Content-Length: ${Buffer.byteLength(json)}`,
    ...headers,
    "Connection: close",
  ];
  return `${head.join("\r\n")}\r\n\r\n${json}`;
}

function answerTo(code: string | undefined, timeoutMs: number): [string, { code: string; message: string }] {
  if (code === "ERR_HTTP_REQUEST_TIMEOUT") {
    return [
      "408 Request Timeout",
      {
        code: "TIMEOUT",
        message: `The request was not sent within httpRequestTimeoutMs (${timeoutMs} ms); send it faster, or raise httpRequestTimeoutMs in the server config.`,
      },
    ];
  }
  if (code === "HPE_HEADER_OVERFLOW") {
    return [
      "431 Request Header Fields Too Large",
      { code: "INVALID_ARGUMENT", message: "The request's headers are too large." },
    ];
  }
  return ["400 Bad Request", { code: "INVALID_ARGUMENT", message: "The request is not valid HTTP/1.1." }];
}
