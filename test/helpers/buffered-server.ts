/**
 * A `warden serve` over the fake backend on a real listener, for the tests of the bytes it holds
 * (src/server/http/buffered-bytes.ts): raw HTTP/1.1 requests that can be held open, left unread or
 * pipelined, and the warden_buffered_bytes gauge to wait on instead of racing the server.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ServerConfig } from "../../src/server/config/index.js";
import { type RunningServer, startServer } from "../../src/server/server.js";
import { auth, FakeBackend, serverParts, type TOKENS, testConfig } from "./server-fakes.js";

export const MiB = 1024 * 1024;

/** A raw request: its socket, when it closed, and everything received so far (latin1). */
export interface RawRequest {
  socket: Socket;
  closed: Promise<void>;
  received: () => string;
}

/** A served fake backend and the requests the tests make of it. */
export function bufferedServer() {
  let dir = "";
  let server: RunningServer | undefined;
  let backend: FakeBackend | undefined;
  let url = "";
  const sockets: Socket[] = [];

  /** A connection from `localAddress` (any of 127/8 on Linux) that sends nothing yet; collects what comes back. */
  const open = (localAddress = "127.0.0.1"): RawRequest => {
    const { hostname, port } = new URL(url);
    const socket = connect({ port: Number(port), host: hostname, localAddress });
    sockets.push(socket);
    let received = "";
    socket.on("data", (d) => (received += d.toString("latin1")));
    socket.on("error", () => {});
    const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    return { socket, closed, received: () => received };
  };

  /** Writes `head` (lines without the blank line) and `body`; collects what comes back. */
  const raw = (head: string, body = ""): RawRequest => {
    const request = open();
    request.socket.write(`${head}\r\n\r\n${body}`);
    return request;
  };

  return {
    raw,
    open,
    url: () => url,
    /** The running server (after serve). */
    running: (): RunningServer => {
      if (!server) throw new Error("serve() first");
      return server;
    },
    /** The running server's fake backend (after serve): its sessions, to hold their calls. */
    backend: (): FakeBackend => {
      if (!backend) throw new Error("serve() first");
      return backend;
    },
    /** Starts the server with testConfig edited by `edit`; every tenant's maxBufferedBytes is `quota`. */
    async serve(quota: number, edit: (config: ServerConfig) => void = () => {}): Promise<void> {
      dir = await mkdtemp(join(tmpdir(), "warden-buffered-"));
      const config = testConfig(dir);
      for (const t of config.tenants) t.quotas = { ...t.quotas, maxBufferedBytes: quota };
      edit(config);
      backend = new FakeBackend();
      server = await startServer({ config, ...serverParts(backend), listen: true });
      url = server.url as string;
    },
    async stop(): Promise<void> {
      for (const s of sockets.splice(0)) s.destroy();
      await server?.shutdown(0);
      server = undefined;
      backend = undefined;
      await rm(dir, { recursive: true, force: true });
    },
    async create(who: keyof typeof TOKENS): Promise<string> {
      const res = await fetch(`${url}/v1/sessions`, {
        method: "POST",
        headers: { ...auth(who), "content-type": "application/json" },
        body: "{}",
      });
      return ((await res.json()) as { id: string }).id;
    },
    /** The head of a file PUT of `length` declared bytes. */
    putHead(id: string, who: keyof typeof TOKENS, length: number, type = "application/octet-stream"): string {
      return [
        `PUT /v1/sessions/${id}/files?path=f.bin HTTP/1.1`,
        "host: x",
        `authorization: ${auth(who).authorization}`,
        `content-type: ${type}`,
        `content-length: ${length}`,
      ].join("\r\n");
    },
    /** The head of a tool-call batch whose JSON body has `length` bytes. */
    callsHead(id: string, who: keyof typeof TOKENS, length: number): string {
      return [
        `POST /v1/sessions/${id}/tool-calls HTTP/1.1`,
        "host: x",
        `authorization: ${auth(who).authorization}`,
        "content-type: application/json",
        `content-length: ${length}`,
      ].join("\r\n");
    },
    /** The head of a file GET. */
    getHead(id: string, who: keyof typeof TOKENS): string {
      return [
        `GET /v1/sessions/${id}/files?path=f.bin HTTP/1.1`,
        "host: x",
        `authorization: ${auth(who).authorization}`,
      ].join("\r\n");
    },
    put(id: string, who: keyof typeof TOKENS, bytes: number): Promise<Response> {
      return fetch(`${url}/v1/sessions/${id}/files?path=f.bin`, {
        method: "PUT",
        headers: { ...auth(who), "content-type": "application/octet-stream" },
        body: Buffer.alloc(bytes, 120),
      });
    },
    get(id: string, who: keyof typeof TOKENS): Promise<{ status: number; text: string }> {
      return fetch(`${url}/v1/sessions/${id}/files?path=f.bin`, { headers: auth(who) }).then(async (r) => ({
        status: r.status,
        text: await r.text(),
      }));
    },
    /** The warden_buffered_bytes lines of /metrics, e.g. `warden_buffered_bytes{tenant="alpha"} 1048576`. */
    async gauge(): Promise<string> {
      const text = await (await fetch(`${url}/metrics`)).text();
      return (text.match(/^warden_buffered_bytes\{.*$/gm) ?? []).join("\n");
    },
  };
}
